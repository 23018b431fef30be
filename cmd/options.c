#include "options.h"

int cmd_bad_option(const char *cmd, char **argv, int missing)
{
	if (missing)
		fprintf(stderr, "prof %s: option '%s' needs a value; see 'prof %s --help'\n", cmd,
			argv[optind - 1], cmd);
	else
		fprintf(stderr, "prof %s: unknown option '%s'; see 'prof %s --help'\n", cmd,
			argv[optind - 1], cmd);
	return 2;
}

int cmd_options(const char *cmd, int argc, char **argv, const struct option *longopts,
		void (*usage)(FILE *), int (*each)(void *ctx, int ch), void *ctx)
{
	int ch, rc;
	optind = 1;
	opterr = 0;
	/* ':' after '+': a missing value is ':', an unknown option '?' */
	while ((ch = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout);
			return -1;
		}
		if (ch == '?' || ch == ':')
			return cmd_bad_option(cmd, argv, ch == ':');
		if ((rc = each(ctx, ch)) != 0)
			return rc;
	}
	return 0;
}
