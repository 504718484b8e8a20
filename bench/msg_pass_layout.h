/* SPDX-License-Identifier: MIT */
/*
 * The two regions of `msg_pass --server` (bench/msg_pass.c), as its
 * clients address them over verbs: D1 holds each producer thread's data,
 * D2 each thread's flag word, what the server's consumer saw and its
 * counts, and the cell the client announces.  A producer writes its
 * message at D1 + t * MP_DATA_MAX with the flag value in its first and last
 * 8 bytes, then the flag at D2 + MP_FLAG_OFF + 8 t; the consumer, on each
 * new flag f, finds a message behind if either stamp is below f ("late").
 */
#ifndef OMS_MSG_PASS_LAYOUT_H
#define OMS_MSG_PASS_LAYOUT_H

#define MP_MAX_THREADS	16
#define MP_DATA_MAX	65536u	/* a message, at most */
#define MP_DATA_REGION	(MP_MAX_THREADS * MP_DATA_MAX)
#define MP_FLAG_REGION	4096u
#define MP_FLAG_OFF	0u	/* + 8 t: thread t's flag */
#define MP_SEEN_OFF	128u	/* + 8 t: the last flag of t the consumer saw */
#define MP_COUNTS_OFF	256u	/* checks, late: written by the consumer */
#define MP_CELL_OFF	320u	/* size, threads: written by the client
				 * before the first flag of a size */

#endif
