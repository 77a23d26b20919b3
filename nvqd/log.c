/*
 * log.c: the daemon's log, at log.h's levels (config.c reads log_level).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static int log_level = LOG_LEVEL_INFO;

void
log_init(int level)
{
	log_level = level;
}

int
log_debugging(void)
{
	return log_level >= LOG_LEVEL_DEBUG;
}

static void
log_vemit(const char *tag, int with_errno, const char *fmt, va_list ap)
{
	int saved = errno;

	fprintf(stderr, "nvqd: %s", tag);
	vfprintf(stderr, fmt, ap);
	if (with_errno)
		fprintf(stderr, ": %s", strerror(saved));
	fputc('\n', stderr);
	errno = saved;
}

#define LOG_BODY(tag, level, with_errno) do {		\
	va_list ap;					\
	if (log_level < (level))			\
		return;					\
	va_start(ap, fmt);				\
	log_vemit(tag, with_errno, fmt, ap);		\
	va_end(ap);					\
} while (0)

void
log_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit("fatal: ", 1, fmt, ap);
	va_end(ap);
	exit(1);
}

void
log_fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vemit("fatal: ", 0, fmt, ap);
	va_end(ap);
	exit(1);
}

void log_warn(const char *fmt, ...) { LOG_BODY("warning: ", LOG_LEVEL_WARN, 1); }
void log_warnx(const char *fmt, ...) { LOG_BODY("warning: ", LOG_LEVEL_WARN, 0); }
void log_info(const char *fmt, ...) { LOG_BODY("", LOG_LEVEL_INFO, 0); }
void log_debug(const char *fmt, ...) { LOG_BODY("debug: ", LOG_LEVEL_DEBUG, 0); }
