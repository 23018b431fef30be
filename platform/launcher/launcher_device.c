#include "launcher/launcher_device.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/agent_env.h"

#ifdef PROF_HAVE_CUDA
#include "launcher/cuda/sampler.h"
#endif

#define LAUNCHER_DEVICE_LOG PROF_LOG_DIR "/launcher-device.log"

bool launcher_device_cuda(void)
{
#ifdef PROF_HAVE_CUDA
	return true;
#else
	return false;
#endif
}

void launcher_device_start(struct launcher_device *d, int run_fd, int launcher_fd,
			   uint32_t interval_ms, uint64_t *disk_full)
{
	d->nvml = NULL;
#ifdef PROF_HAVE_CUDA
	int log_fd = openat(run_fd, LAUNCHER_DEVICE_LOG,
			    O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (log_fd >= 0)
		fchmod(log_fd, 0640);   /* past the umask, as every run file */
	nvml_sampler_start(&d->nvml, launcher_fd, interval_ms, log_fd, disk_full);
	if (log_fd >= 0)
		close(log_fd);
#else
	(void)run_fd, (void)launcher_fd, (void)interval_ms, (void)disk_full;
#endif
}

void launcher_device_stop(struct launcher_device *d)
{
#ifdef PROF_HAVE_CUDA
	nvml_sampler_stop(d->nvml);
#endif
	d->nvml = NULL;
}
