/*
 * version.h: nvq's release, as nvq --version and nvqd -V print it (the
 * package's upstream version in debian/changelog must match: t_version).
 */
#ifndef NVQ_VERSION_H
#define NVQ_VERSION_H

#define NVQ_VERSION	"0.1.0"

#endif
