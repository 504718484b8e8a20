/* SPDX-License-Identifier: MIT */
/*
 * The region the litmus server (rxe_server.c) exposes over verbs, and how
 * a client drives its observer.  All fields are 64-bit words at fixed
 * offsets; the client writes them with oms_put and reads the results back
 * with oms_get - nothing but RDMA between the two hosts.
 *
 * An experiment: the client writes its description (data word offsets,
 * flag offset), then a new epoch.  The observer thread, on the server's
 * CPU, keeps reading the flag; each time the flag changes to v it reads
 * every data word and counts a forbidden outcome if one is below v (the
 * client writes the value i to every data word, then the flag, for
 * i = 1, 2, ...).  When the client writes the epoch to RX_FINISH the
 * observer publishes its counts and sets RX_RES_DONE to the epoch.
 *
 * RX_MODE (read with the epoch) says what the observer does meanwhile:
 *
 *   MP      the above (message passing: data must land before the flag);
 *   ECHO    each time the flag changes to v it stores v to the word at
 *           RX_ECHO_OFF: a second thread that reads Y and then writes F,
 *           for load-buffering shapes (L34: a client whose acquire of F
 *           returns v saw the effect of a put it issued after the
 *           acquire);
 *   WRITER  it writes k = 1, 2, ... to the first data word and then, with
 *           a release, to the flag: a host that writes Y then F (L35);
 *           RX_RES_SEEN is the last k.
 */
#ifndef OMS_RXE_PROTO_H
#define OMS_RXE_PROTO_H

#define RX_REGION	(1u << 20)	/* bytes exposed */
#define RX_MAX_DATA	4

/* written by the client */
#define RX_CMD		0x000	/* RX_CMD_* */
#define RX_EPOCH	0x008	/* the experiment the observer follows */
#define RX_NDATA	0x010
#define RX_FLAG_OFF	0x018
#define RX_DATA_OFF	0x020	/* [RX_MAX_DATA] */
#define RX_FINISH	0x040	/* epoch to publish results of */
#define RX_MODE		0x048	/* RX_MODE_* */
#define RX_ECHO_OFF	0x050	/* ECHO: where the flag's value goes */
/* written by the observer */
#define RX_RES_EPOCH	0x080	/* experiment it is watching */
#define RX_RES_SEEN	0x088	/* flag changes seen */
#define RX_RES_BAD	0x090	/* forbidden outcomes */
#define RX_RES_DONE	0x098	/* epoch whose results are final */
#define RX_RES_READY	0x0a0	/* nonzero once the observer runs */

/*
 * The poster (seed 002's owner, L23-L25 through the agent): a thread of
 * the server that connects back to a listener of the client and, per
 * trial k = 1..TRIALS, puts NPUTS writes of LEN bytes to it (write j at
 * offset OFF + j * LEN, its last word k; over NCONN connections in turn),
 * then
 * stores k to RX_POST_FLAG with a release and waits for its puts (quiet).
 * The client reads the flag with class-2 gets through the agent: an
 * answer k may not arrive before the writes of trial k are in its memory.
 * The client writes the parameters, then RX_POST_GO (an epoch); the
 * poster sets the flag to 0 and says so in RX_POST_START (the epoch:
 * the client reads the flag only after, or it could see the last run's),
 * then answers in RX_POST_DONE (the epoch) and RX_POST_ERR (0 or an
 * errno).
 */
#define RX_POST_HOST	0x100	/* 32 bytes: the client's address */
#define RX_POST_PORT	0x120	/* its listener's port */
#define RX_POST_NPUTS	0x128
#define RX_POST_LEN	0x130
#define RX_POST_TRIALS	0x138
#define RX_POST_NCONN	0x140	/* 1 or 2 */
#define RX_POST_GO	0x148
#define RX_POST_DONE	0x150
#define RX_POST_ERR	0x158
#define RX_POST_START	0x160	/* the epoch, once the flag is 0 again */
#define RX_POST_OFF	0x168	/* where in the target region write 0 goes */
#define RX_POST_WHERE	0x170	/* with an error: the trial it came in, 0
				 * while connecting */
#define RX_POST_MS	0x178	/* how long the run took, ms */
#define RX_POST_FLAG	0x180	/* its own line */
#define RX_POST_MAX	(1u << 20)	/* NPUTS * LEN at most */

/* free for the client's experiments */
#define RX_DATA		0x1000	/* small words, one per 64-byte line */
#define RX_SCRATCH	0x8000	/* bytes a test may clobber */
#define RX_BULK		0x40000	/* big writes that keep a QP busy */
#define RX_BULK_LEN	0x40000

enum {
	RX_MODE_MP = 0,
	RX_MODE_ECHO = 1,
	RX_MODE_WRITER = 2,
};

enum {
	RX_CMD_NONE = 0,
	RX_CMD_QUIT = 1,	/* exit 0 */
	RX_CMD_DIE = 2,		/* SIGKILL itself: the peer goes away */
};

#endif
