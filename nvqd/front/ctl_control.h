/*
 * ctl_control.h: the handlers of the requests that steer the GPUs and what
 * runs on them (ctl_control.c), for ctl.c's table.  Each runs once the
 * dispatcher has checked its row.  Each returns 0 or -1 with req->err set.
 */
#ifndef NVQ_CTL_CONTROL_H
#define NVQ_CTL_CONTROL_H

#include "ctl.h"

/* nvq suspend and nvq resume: req->job (or req->slurm), the caller its owner or an admin */
int	ctl_control_suspend(struct ctl_req *, struct proto_buf *);
/* nvq drain and nvq undrain: an admin's */
int	ctl_control_drain(struct ctl_req *, struct proto_buf *);
/* A Slurm step, from nvq's SPANK plugin: root's */
int	ctl_control_adopt(struct ctl_req *, struct proto_buf *);

#endif
