/* prof diff's comparability check on the commands: another program is a
 * reason the runs may not compare; the same program with other arguments
 * is not, and the words that differ are said (with the option a differing
 * value belongs to). */
#include <string.h>

#include "stats/stats_diff.h"
#include "unit.h"

#define MAX_WORDS 12

struct cmd {
	struct diff_side side;
	char *words[MAX_WORDS + 1];
	char line[512], split[512];   /* the command; its words, NUL-separated */
};

/* A side with 10 steps, no device, one run, running `text` (split on
 * spaces). */
static void side(struct cmd *c, const char *text)
{
	memset(c, 0, sizeof *c);
	snprintf(c->line, sizeof c->line, "%s", text);
	snprintf(c->split, sizeof c->split, "%s", text);
	for (char *w = strtok(c->split, " "); w && c->side.nwords < MAX_WORDS; w = strtok(NULL, " "))
		c->words[c->side.nwords++] = w;
	c->side.words = c->words;
	c->side.command = c->line;
	c->side.have_steps = 1;
	c->side.steps.steps = 10;
	c->side.runs = 1;
}

static void check(const char *base, const char *new_cmd, struct diff_check *ck)
{
	struct cmd b, n;
	side(&b, base);
	side(&n, new_cmd);
	diff_check_runs(&b.side, &n.side, ck);
}

static void expect_args(const char *base, const char *new_cmd, const char *a, const char *b)
{
	struct diff_check ck;
	check(base, new_cmd, &ck);
	CHECK(ck.n == 0);
	CHECK(ck.args_differ);
	CHECK_STR(ck.args[0], a);
	CHECK_STR(ck.args[1], b);
}

static void expect_programs(const char *base, const char *new_cmd)
{
	struct diff_check ck;
	check(base, new_cmd, &ck);
	CHECK(ck.n == 1 && !ck.args_differ);
	CHECK_CONTAINS(ck.notes[0], "the programs differ: BASE ran `");
	CHECK_CONTAINS(ck.notes[0], base);
	CHECK_CONTAINS(ck.notes[0], new_cmd);
}

int main(void)
{
	struct diff_check ck;
	check("python3 train.py --hidden 64", "python3 train.py --hidden 64", &ck);
	CHECK(ck.n == 0 && !ck.args_differ);
	expect_args("/usr/bin/python3 train.py --steps 10 --hidden 64",
		    "/usr/bin/python3 train.py --steps 10 --hidden 1024",
		    "--hidden 64", "--hidden 1024");
	expect_args("python3 -u train.py --hidden 64 --steps 10",
		    "python3 -u train.py --hidden 512 --steps 10", "--hidden 64", "--hidden 512");
	expect_args("python3 -W ignore train.py --lr=0.1", "python3 -W ignore train.py --lr=0.2",
		    "--lr=0.1", "--lr=0.2");
	expect_args("./tx_steps 4 5", "./tx_steps 4 25", "5", "25");
	expect_args("./prog", "./prog --fast", "", "--fast");
	expect_args("python3 -m pkg.train --a 1", "python3 -m pkg.train --a 1 --b 2", "", "--b 2");
	expect_programs("python3 a.py --hidden 64", "python3 b.py --hidden 64");
	expect_programs("python3 -m pkg.train", "python3 -m pkg.eval");
	expect_programs("python3 -c pass", "python3 -c print()");
	expect_programs("./sim_work 3", "./tx_steps 4 5");
	return unit_done();
}
