/* SPDX-License-Identifier: MIT */
/*
 * Private declarations of the KVS (lib/kvs/): the region's directory as it
 * travels to clients, and the item layout of each protocol.  Server,
 * writers and clients all derive offsets from kvs_layout(), so the layout
 * is written once.
 *
 * Region:   [directory, KVS_DIR_BYTES][table 0 items][table 1 items]...
 * Item layouts (S = value size, items 64-byte aligned, stride a multiple
 * of 64):
 *   Single Read  [header version 8][value S][footer version 8]
 *   Validation   [version 8][value S]            (odd while writing)
 *   FaRM         lines of [version 8][56 value bytes]; line 0's version
 *                is the header; the last line is short
 *   Pessimistic  [lock word 8][version 8][value S]; lock = writer bit 63
 *                | reader count
 */
#ifndef OMS_KVS_PRIV_H
#define OMS_KVS_PRIV_H

#include <stdint.h>
#include <string.h>

#include "oms_kvs.h"

#define KVS_MAGIC	0x313053564b534d4full	/* "OMSKVS01" */
#define KVS_DIR_VERSION	2u	/* 2: entries carry table flags */
#define KVS_TABLE0	4096u		/* first table's offset */
#define KVS_LINE	64u
#define KVS_FARM_CHUNK	(KVS_LINE - 8u)	/* value bytes per FaRM line */
#define KVS_WRITER_BIT	(1ull << 63)	/* Pessimistic lock word */
#define KVS_FIRST_VERSION 2ull
#define KVS_MAX_REGION	(1ull << 30)

/* The directory, as the server writes it and clients read it. */
struct kvs_dir_ent {
	uint32_t proto;		/* layout: OMS_KVS_SINGLE..PESSIMISTIC */
	uint32_t value_size;
	uint32_t items;
	uint32_t stride;
	uint64_t offset;	/* of item 0 in the region */
	uint32_t flags;		/* OMS_KVS_TABLE_* */
	uint32_t reserved;
};

struct kvs_dir {
	uint64_t magic;
	uint32_t version;
	uint32_t ntables;
	uint64_t region_len;
	uint64_t nonce;		/* this server's, at create: a writer checks
				 * that its listener serves this very one */
	uint8_t pad[32];
	struct kvs_dir_ent t[OMS_KVS_MAX_TABLES];
};

_Static_assert(sizeof(struct kvs_dir) <= KVS_TABLE0, "directory fits");

/* Where things are inside one item of a layout. */
struct kvs_layout {
	uint32_t proto;		/* layout */
	uint32_t value_size;
	uint32_t stride;	/* bytes per item */
	uint32_t read_size;	/* bytes of the main read, from item start */
	uint32_t value_off;	/* value in the read buffer once returned */
	uint32_t ver_off;	/* the version word (header, seqlock, ...) */
	uint32_t ftr_off;	/* Single Read: footer version */
	uint32_t lines;		/* FaRM: lines per item */
};

/* The server (lib/kvs/server.c); writers (lib/kvs/writer.c) use it. */
struct oms_kvs_server {
	struct oms_ctx *ctx;
	struct oms_mr *mr;
	struct oms_listener *listener;
	uint8_t *mem;			/* the region */
	uint64_t len;
	uint32_t ntables;
	uint32_t max_stride;
	int has_pessimistic;
	int has_remote_write;		/* a table has REMOTE_WRITE */
	int writers;			/* writers alive (atomic) */
	struct kvs_layout lay[OMS_KVS_MAX_TABLES];
	uint64_t off[OMS_KVS_MAX_TABLES];	/* item 0 of each table */
	uint32_t items[OMS_KVS_MAX_TABLES];
	uint32_t flags[OMS_KVS_MAX_TABLES];	/* OMS_KVS_TABLE_* */
	/* Host-only, never registered: each item's current version, odd
	 * while a writer has it (writers exclude each other with it). */
	uint64_t *ver[OMS_KVS_MAX_TABLES];
	char addr[256], port[256];	/* where it listens */
};

/* 0, or -EINVAL if @proto/@value_size make no layout. */
int kvs_layout(uint32_t proto, uint32_t value_size, struct kvs_layout *l);

/* Item image of (@key, @version): read_size bytes at @img; @val is
 * value_size bytes of scratch. */
void kvs_item_build(const struct kvs_layout *l, uint64_t key,
		    uint64_t version, uint8_t *val, uint8_t *img);

/* What an update through the NIC works with (lib/kvs/remote.c). */
struct kvs_nic_writer {
	struct oms_ctx *ctx;
	const struct oms_rmr *rmr;	/* the server's region */
	uint8_t *img;			/* stride bytes of scratch */
	uint8_t *val;			/* value_size bytes of scratch */
};

/*
 * Write the next version of the item at @base (layout @l) through the NIC:
 * lock by compare-and-swap, WRITE in the protocol's order, unlock (see
 * oms_kvs_client_update()).  *@ver: in, a guess of the item's current
 * version (even); out, the version written, or on -EBUSY the last one
 * seen.  0, -EBUSY (locked: nothing written), the context's errors.
 */
int kvs_nic_update(const struct kvs_nic_writer *w,
		   const struct kvs_layout *l, uint64_t base, uint64_t key,
		   uint64_t *ver);

/* Check a directory read from a peer against the region's length. */
int kvs_dir_check(const struct kvs_dir *d, uint64_t region_len);

static inline uint64_t kvs_load64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

#endif
