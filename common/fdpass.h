/*
 * fdpass.h: file descriptors over a Unix socket (SCM_RIGHTS), carried by
 * one byte: nvq run passes its terminal, nvqd takes it (server.c).
 */
#ifndef NVQ_FDPASS_H
#define NVQ_FDPASS_H

#define FDPASS_MAX	8

/* Sends n (1 to FDPASS_MAX) descriptors with one byte: 0, or -1 with errno. */
int	fdpass_send(int sock, const int *fds, int n);
/*
 * Receives the byte and at most max descriptors (close-on-exec), without
 * blocking: their count (the caller's to close), 0 if nothing came yet, or
 * -1 for anything else: the peer gone, no byte, more than max, other
 * control data (whatever came with it is closed).
 */
int	fdpass_recv(int sock, int *fds, int max);

#endif
