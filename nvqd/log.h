/*
 * log.h: nvqd's leveled log on stderr (journald adds time and unit).
 * log_warn and log_fatal add errno's text; the x variants do not.
 */
#ifndef NVQ_LOG_H
#define NVQ_LOG_H

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

void	log_init(int level);
void	log_fatal(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	log_fatalx(const char *, ...) __attribute__((format(printf, 1, 2), noreturn));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
/* Whether debug lines are written: what would only be a debug line need not be made. */
int	log_debugging(void);

#endif
