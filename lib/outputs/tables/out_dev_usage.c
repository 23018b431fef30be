#include "outputs/tables/out_dev_usage.h"

#include "outputs/tables/out_host.h"

const char *out_vendor_name(uint32_t vendor)
{
	switch (vendor) {
	case RAW_VENDOR_SIM:  return "SIM";
	case RAW_VENDOR_CUDA: return "CUDA";
	case OUT_VENDOR_HOST: return "HOST";
	default:              return "DEVICE";
	}
}

int out_dev_usage_open(struct out_dev_usage *u, const char *dir, uint64_t base_mono_ns)
{
	int rc = out_file_open(&u->file, dir, "device_usage.csv");
	if (rc)
		return rc;
	u->base = base_mono_ns;
	csv_init(&u->c, u->file.f);
	csv_header(&u->c, OUT_DEV_USAGE_HEADER);
	return 0;
}

void out_dev_usage_row(struct out_dev_usage *u, uint64_t ns, const struct raw_dev_sample *s)
{
	struct csv *c = &u->c;
	csv_ns_us(c, (int64_t)(ns - u->base));
	csv_uint(c, s->device);
	csv_str(c, out_vendor_name(s->vendor));
	csv_uint(c, s->util_pct);
	csv_uint(c, s->mem_util_pct);
	csv_fixed(c, (double)s->mem_used_bytes / OUT_MB, 3);
	csv_fixed(c, (double)s->mem_total_bytes / OUT_MB, 3);
	csv_fixed(c, (double)s->power_mw / 1000.0, 3);
	csv_uint(c, s->sm_clock_mhz);
	csv_uint(c, s->temperature_c);
	csv_end_row(c);
}

int out_dev_usage_close(struct out_dev_usage *u)
{
	return out_file_commit(&u->file, csv_finish(&u->c));
}

void out_dev_usage_abort(struct out_dev_usage *u)
{
	out_file_abort(&u->file);
}
