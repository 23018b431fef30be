#include "common/strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sb_grow(struct strbuf *sb, size_t more)
{
	if (sb->oom)
		return -1;
	if (sb->len + more + 1 <= sb->cap)
		return 0;
	size_t cap = sb->cap ? sb->cap : 64;
	while (cap < sb->len + more + 1)
		cap *= 2;
	char *nb = realloc(sb->buf, cap);
	if (!nb) {
		sb->oom = 1;
		return -1;
	}
	sb->buf = nb;
	sb->cap = cap;
	return 0;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	if (sb_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_puts(struct strbuf *sb, const char *s) { sb_add(sb, s, strlen(s)); }
void sb_putc(struct strbuf *sb, char c) { sb_add(sb, &c, 1); }

void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	va_copy(cp, ap);
	int n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || sb_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vprintf(sb, fmt, ap);
	va_end(ap);
}

char *sb_detach(struct strbuf *sb)
{
	char *r = sb->buf ? sb->buf : strdup("");
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
	return r;
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
	sb->oom = 0;
}
