/* A growable text buffer: for building JSON, CSV lines and messages. */
#ifndef PROF_STRBUF_H
#define PROF_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len, cap;
	int oom;          /* an allocation failed; contents are truncated */
};

#define STRBUF_INIT { NULL, 0, 0, 0 }

void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_puts(struct strbuf *sb, const char *s);
void sb_putc(struct strbuf *sb, char c);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vprintf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Returns the text (never NULL) and leaves the buffer empty; caller frees. */
char *sb_detach(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

#endif
