/*
 * proto.h: the frames nvq, nvqd and the hook exchange.
 *
 * A frame is an 8-byte header, then a body:
 *   u32 body length (big-endian, at most PROTO_MAX_BODY)
 *   u16 protocol version (PROTO_VERSION)
 *   u16 message type (enum proto_type)
 * The body is a sequence of fields, each
 *   u8 kind ('i' or 's'), u8 key length (1..PROTO_MAX_KEY), the key bytes,
 *   then for 'i' a big-endian int64, for 's' a u32 length and that many
 *   bytes, the last of which is a NUL and no other is.
 * A key may repeat: lists (argv, env) are repeated keys, and a table of
 * rows is a run of fields where each row starts with the key "id".
 * This file works on byte buffers only.  Functions return 0 or -1.
 */
#ifndef NVQ_PROTO_H
#define NVQ_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION	2	/* 2: hold/release and the hook's messages */
/*
 * The hook's link, within frames of PROTO_VERSION: a hello says "version"
 * (none: 2) and "cut" 1 when the hook can stop at a cut (3: MSG_HOOK_CUT,
 * MSG_HOOK_CUTAT); nvqd's revoke says "cut" 1 when it knows cuts.  Either
 * side without them keeps to version 2: the frame version stays 2, so an
 * older hook still links to a newer nvqd and the other way round.
 */
#define PROTO_HOOK_VERSION	5	/* 4: MSG_HOOK_LCBE, the lc/be page (lcbe_page.h);
					   5: and nvqd's live page after them ("live") */
#define PROTO_HEADER	8
#define PROTO_MAX_BODY	(4U << 20)
#define PROTO_MAX_KEY	32

enum proto_type {
	MSG_OK = 1,		/* reply: success, with fields */
	MSG_ERROR,		/* reply: "error" holds a sentence */
	MSG_SUBMIT,
	MSG_LIST,
	MSG_SHOW,
	MSG_CANCEL,
	MSG_HISTORY,
	MSG_GPUS,
	MSG_PING,
	MSG_HOLD,		/* take a job's GPU locks back: "id" */
	MSG_RELEASE,		/* give them back: "id" */
	/* the hook's link (hook/link.c); a hook connection stays open */
	MSG_HOOK_HELLO,		/* hook: "job", "pid"; answered with MSG_HOOK_STATE */
	MSG_HOOK_STATE,		/* nvqd: "granted" 0/1, "seq", "timeslice" 0/1 */
	MSG_HOOK_ACK,		/* hook: "seq" of a revoke, once its work has drained */
	MSG_HOOK_REPORT,	/* hook: rows "uuid", "used", "peak" (bytes per GPU) */
	MSG_HOOK_LIMIT,		/* nvqd: rows "uuid", "cap": what this process may hold */
	MSG_HOOK_WANT,		/* hook: a launch waits for the lock */
	MSG_HOOK_IDLE,		/* hook: no launch for a while (timeslice) */
	MSG_SUSPEND,		/* suspend a job: "id" */
	MSG_RESUME,		/* let a job suspended by a user resume: "id" */
	MSG_HOOK_MOVE,		/* nvqd: "seq", "out" 1 (to host memory) or 0 (back) */
	MSG_HOOK_MOVED,		/* hook: "seq", "out", "bytes", "left", "us", ["error"] */
	MSG_TOP,		/* a pending job first of its priority: "id" */
	MSG_MODIFY,		/* a pending job's "priority", "mem", "time": "id" */
	MSG_REQUEUE,		/* stop a running job and queue it again: "id" */
	MSG_DRAIN,		/* no new jobs on a GPU: "gpu" (index or UUID), ["reason"] */
	MSG_UNDRAIN,		/* new jobs there again: "gpu" */
	MSG_SHARES,		/* the users' recent GPU use and fair-share priority */
	MSG_HOOK_OOM,		/* hook: an allocation refused past the budget: "uuid",
				   "asked", "used" (the job's on that GPU), "limit" */
	MSG_RESTART,		/* finished jobs PENDING again: "id"... or "failed" 1
				   ["since"]; the caller's "env"... */
	MSG_ATTACH,		/* nvq run: "id", "fds" (which of 0, 1, 2), then the
				   descriptors on the socket (server_take_fds) */
	MSG_STATS,		/* the history summed up: ["since"], ["user"] */
	MSG_WATCH,		/* this connection follows changes from now on (watch.h) */
	MSG_CHANGED,		/* nvqd, to a watcher: something changed: "seq" */
	MSG_WEB_TOKEN,		/* the caller's dashboard link: ["new"] 1 for a new token */
	MSG_ADOPT,		/* root's SPANK plugin, from slurmstepd: a Slurm step on
				   this node becomes a running job: "slurm_job", "step",
				   "uid", "gid", "gpus" (node indexes), "mem"; answered
				   with "id", "uuids", "status" (where its end goes) */
	MSG_HOOK_CUT,		/* hook: "seq" of a revoke, ["progress"] 1, then "n" per
				   communicator: its NCCL launches on it (cut.h) */
	MSG_HOOK_CUTAT,		/* nvqd: "seq", then "n" per communicator: the cut's
				   targets, the largest count of the job's processes */
	MSG_HOOK_LCBE,		/* nvqd (hook version 4): "lc" 0/1, "slot", "wait" ms, "gpu" per
				   GPU; the page's descriptor comes with its bytes (SCM_RIGHTS) */
	MSG_MAX
};

/* Whether a message type belongs to the hook's link. */
#define proto_is_hook(t)	(((t) >= MSG_HOOK_HELLO && (t) <= MSG_HOOK_IDLE) || \
				(t) == MSG_HOOK_MOVE || (t) == MSG_HOOK_MOVED || (t) == MSG_HOOK_OOM || \
				(t) == MSG_HOOK_CUT || (t) == MSG_HOOK_CUTAT || (t) == MSG_HOOK_LCBE)

struct proto_field {
	char		key[PROTO_MAX_KEY + 1];
	char		kind;		/* 'i' or 's' */
	int64_t		i;
	const char	*s;		/* points into the decoded body */
	uint32_t	slen;		/* without the NUL */
};

struct proto_msg {
	int			type;
	int			nfields;
	struct proto_field	*fields;	/* owned */
	uint8_t			*body;		/* owned copy the strings point into */
	unsigned		serial;		/* new for each message decoded */
	size_t			fcap, bodycap;	/* what fields and body have room for */
};

struct proto_buf {
	uint8_t		*data;
	size_t		len;
	size_t		cap;
	int		failed;		/* an append ran out of memory or room */
};

/* Encoding: begin, put fields, end; end fails if any put failed. */
void	proto_begin(struct proto_buf *, int type);
void	proto_put_int(struct proto_buf *, const char *key, int64_t);
void	proto_put_str(struct proto_buf *, const char *key, const char *);
int	proto_end(struct proto_buf *);
void	proto_buf_free(struct proto_buf *);

/*
 * Reads a header: returns 0 and sets *type and *len, or -1 with a sentence
 * in err for a wrong version, an unknown type or a body over the maximum.
 */
int	proto_header(const uint8_t *hdr, int *type, uint32_t *len, char *err, size_t errlen);
/* Decodes a body of len bytes into msg (the caller frees it with proto_msg_free). */
int	proto_decode(int type, const uint8_t *body, uint32_t len, struct proto_msg *,
	    char *err, size_t errlen);
void	proto_msg_free(struct proto_msg *);
/*
 * From now on a message freed keeps its storage for the next one decoded,
 * which takes it if it fits.  For single-threaded programs that read many
 * large replies (nvq list: a page's fields are megabytes, and musl's malloc
 * unmaps blocks that large when they are freed, so each page faulted them
 * in anew).
 */
void	proto_reuse_storage(void);

/* The first field named key; NULL if none. */
const struct proto_field *proto_get(const struct proto_msg *, const char *key);
int64_t	proto_int(const struct proto_msg *, const char *key, int64_t dflt);
const char *proto_str(const struct proto_msg *, const char *key);

const char *proto_type_name(int);

#endif
