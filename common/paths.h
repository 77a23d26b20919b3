/*
 * paths.h: where nvqd's socket is when nothing says where: one answer for
 * nvq, which looks for it, and nvqd, which makes it.
 */
#ifndef NVQ_PATHS_H
#define NVQ_PATHS_H

#include <stddef.h>

/* The socket of the system's nvqd, run as root. */
#define PATHS_SYSTEM_SOCKET	"/run/nvq/nvqd.sock"

/*
 * The socket of the calling user's own nvqd, into buf:
 * $XDG_RUNTIME_DIR/nvq/nvqd.sock, else /tmp/nvq-UID/nvqd.sock.
 */
void	paths_user_socket(char *buf, size_t len);

#endif
