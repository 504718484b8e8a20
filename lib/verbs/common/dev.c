// SPDX-License-Identifier: MIT
/*
 * The device side of a verbs context: pick the RDMA device (OMS_DEVICE, or
 * the first librdmacm lists) and its port and GID (src_addr.c), find its NUMA node (sysfs; OMS_NUMA_NODE
 * overrides), allocate the protection domain, the completion queue and the
 * backend's own buffers (bounce slots, atomic results) on that node, and
 * undo it all at close.  The ibv_context is librdmacm's, so the cm_ids of
 * later connections can be checked against it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/common/verbs.h"

/* The node of the device's PCI function, or -1 (a software device). */
static int sysfs_numa_node(struct ibv_device *dev)
{
	char path[IBV_SYSFS_PATH_MAX + 32];
	FILE *f;
	int node = -1;

	snprintf(path, sizeof(path), "%s/device/numa_node", dev->ibdev_path);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

/* OMS_NUMA_NODE (a node number) wins; else the device's; -1 unknown. */
static int pick_numa_node(struct ibv_device *dev)
{
	const char *env = getenv("OMS_NUMA_NODE");
	int node = sysfs_numa_node(dev);

	if (env && *env) {
		char *end;
		long v = strtol(env, &end, 10);

		if (!*end && v >= 0 && v <= 1024)
			node = (int)v;
	}
	if (node >= 0 && numa_available() >= 0 && node > numa_max_node())
		node = -1;	/* no such node here */
	return node;
}

int vb_numa_node(const struct vb_ctx *vc)
{
	return vc->numa_node;
}

/* The backend's buffers: on the device's node when known. */
static int buf_alloc(struct vb_ctx *vc, size_t len)
{
	void *p = NULL;

	vc->buf_len = len;
	if (numa_available() >= 0 && vc->numa_node >= 0 &&
	    vc->numa_node <= numa_max_node()) {
		p = numa_alloc_onnode(len, vc->numa_node);
		vc->buf_numa = !!p;
	}
	if (!p && posix_memalign(&p, 4096, len))
		p = NULL;
	if (!p)
		return -ENOMEM;
	memset(p, 0, len);
	vc->buf = p;
	return 0;
}

static void buf_free(struct vb_ctx *vc)
{
	if (!vc->buf)
		return;
	if (vc->buf_numa)
		numa_free(vc->buf, vc->buf_len);
	else
		free(vc->buf);
	vc->buf = NULL;
}

/* The device named by OMS_DEVICE, else the first; -ENODEV if none. */
static int pick_device(struct vb_ctx *vc)
{
	const char *want = oms_be_view(vc->ctx)->rdma.dev;
	struct ibv_context **list;
	int n = 0, err = -ENODEV;

	list = rdma_get_devices(&n);
	if (!list)
		return -ENODEV;
	for (int i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]->device);

		if (want && *want && strcmp(want, name))
			continue;
		vc->verbs = list[i];
		snprintf(vc->dev_name, sizeof(vc->dev_name), "%s", name);
		err = 0;
		break;
	}
	rdma_free_devices(list);
	return err;
}

static uint32_t cq_entries(const struct vb_ctx *vc)
{
	/* every send WR, and every receive an agent connection posts, may
	 * complete at once when QPs fail (flushed) */
	uint32_t want = VB_MAX_CONN * (VB_SQ_DEPTH + VB_AGENT_CQ_MAX) + 64;
	uint32_t max = vc->dattr.max_cqe > 0 ? (uint32_t)vc->dattr.max_cqe : want;

	return want < max ? want : max;
}

int vb_dev_open(struct oms_ctx *ctx)
{
	struct vb_ctx *vc = calloc(1, sizeof(*vc));
	uint32_t qd = oms_be_view(ctx)->qdepth;
	size_t blen;
	int err;

	if (!vc)
		return -ENOMEM;
	vc->ctx = ctx;
	oms_be_view(ctx)->priv = vc;
	err = pick_device(vc);
	if (err)
		goto err_free;
	vc->numa_node = pick_numa_node(vc->verbs->device);
	if (ibv_query_device(vc->verbs, &vc->dattr)) {
		err = -ENODEV;
		goto err_free;
	}
	err = vb_src_addr_pick(vc, &oms_be_view(ctx)->rdma);
	if (err)
		goto err_free;
	vc->op = calloc(qd, sizeof(*vc->op));
	vc->wc = calloc(qd, sizeof(*vc->wc));
	for (int i = 0; i < VB_MAX_CONN; i++)
		vc->conn[i].fifo = calloc(qd, sizeof(uint32_t));
	err = -ENOMEM;
	if (!vc->op || !vc->wc)
		goto err_arrays;
	for (int i = 0; i < VB_MAX_CONN; i++)
		if (!vc->conn[i].fifo)
			goto err_arrays;
	blen = (size_t)qd * VB_BOUNCE + (size_t)qd * sizeof(uint64_t);
	err = buf_alloc(vc, blen);
	if (err)
		goto err_arrays;
	vc->bounce = vc->buf;
	vc->result = (uint64_t *)(vc->buf + (size_t)qd * VB_BOUNCE);
	vc->pd = ibv_alloc_pd(vc->verbs);
	if (!vc->pd) {
		err = vb_errno(-ENOMEM);
		goto err_buf;
	}
	vc->buf_mr = ibv_reg_mr(vc->pd, vc->buf, blen, IBV_ACCESS_LOCAL_WRITE);
	if (!vc->buf_mr) {
		err = vb_errno(-ENOMEM);
		goto err_pd;
	}
	vc->cq = ibv_create_cq(vc->verbs, (int)cq_entries(vc), NULL, NULL, 0);
	if (!vc->cq) {
		err = vb_errno(-ENOMEM);
		goto err_mr;
	}
	return 0;

err_mr:
	ibv_dereg_mr(vc->buf_mr);
err_pd:
	ibv_dealloc_pd(vc->pd);
err_buf:
	buf_free(vc);
err_arrays:
	for (int i = 0; i < VB_MAX_CONN; i++)
		free(vc->conn[i].fifo);
	free(vc->wc);
	free(vc->op);
err_free:
	free(vc);
	oms_be_view(ctx)->priv = NULL;
	return err;
}

void vb_dev_close(struct oms_ctx *ctx)
{
	struct vb_ctx *vc = VC(ctx);

	/* the connections are gone already (the backend's close destroys
	 * them first): the device never calls up into the initiator */
	if (vc->cm_ch)
		rdma_destroy_event_channel(vc->cm_ch);
	for (int i = 0; i < VB_MAX_MR; i++)
		if (vc->lmr[i].used)
			ibv_dereg_mr(vc->lmr[i].mr);
	/* temporary registrations of operations that never finished */
	for (uint32_t i = 0; i < oms_be_view(ctx)->qdepth; i++)
		if (vc->op[i].tmp)
			ibv_dereg_mr(vc->op[i].tmp);
	ibv_destroy_cq(vc->cq);
	ibv_dereg_mr(vc->buf_mr);
	ibv_dealloc_pd(vc->pd);
	buf_free(vc);
	for (int i = 0; i < VB_MAX_CONN; i++)
		free(vc->conn[i].fifo);
	free(vc->wc);
	free(vc->op);
	free(vc);
	oms_be_view(ctx)->priv = NULL;
}
