// SPDX-License-Identifier: MIT
/*
 * The port and GID a user named (OMS_PORT, OMS_GID_INDEX: perftest's -i
 * and -x; checked against sysfs in lib/core/rdma_env.c) made real under
 * rdma_cm, which picks both from IP addresses:
 *   - a RoCE GID is an IP address of the port's netdev (IPv4 as
 *     ::ffff:a.b.c.d), so the context's connections leave from it
 *     (rdma_resolve_addr's source) and a listener given no address binds
 *     to it: the route then uses that GID;
 *   - a port alone is checked: a connection whose route leaves by another
 *     port, or a request that arrives on another, is refused and says so.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/common/verbs.h"

static int gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pre[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pre, sizeof(pre));
}

int vb_src_addr_pick(struct vb_ctx *vc, const struct oms_be_rdma_want *w)
{
	struct ibv_gid_entry e;
	uint32_t port = w->port ? w->port : 1;

	vc->port = w->port;
	if (w->gid_index < 0)
		return 0;
	memset(&e, 0, sizeof(e));
	if (_ibv_query_gid_ex(vc->verbs, port, (uint32_t)w->gid_index, &e, 0,
			      sizeof(e))) {
		fprintf(stderr, "liboms: verbs: GID %d of port %u of %s cannot "
			"be read (OMS_GID_INDEX)\n", w->gid_index, port,
			vc->dev_name);
		return vb_errno(-EINVAL);
	}
	if (e.gid_type == IBV_GID_TYPE_IB) {
		fprintf(stderr, "liboms: verbs: GID %d of port %u of %s is an "
			"InfiniBand GID: connect by its IPoIB address "
			"(OMS_GID_INDEX is taken on RoCE ports)\n",
			w->gid_index, port, vc->dev_name);
		return -EINVAL;
	}
	vc->port = port;
	memset(&vc->src, 0, sizeof(vc->src));
	if (gid_is_v4(&e.gid)) {
		struct sockaddr_in *in = (struct sockaddr_in *)&vc->src;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, e.gid.raw + 12, 4);
		vc->src_len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&vc->src;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, e.gid.raw, 16);
		/* fe80::/10 means something only on its own link */
		if (e.gid.raw[0] == 0xfe && (e.gid.raw[1] & 0xc0) == 0x80)
			in6->sin6_scope_id = e.ndev_ifindex;
		vc->src_len = sizeof(*in6);
	}
	return 0;
}

int vb_src_addr_fits(const struct vb_ctx *vc, const struct sockaddr *dst)
{
	if (!vc->src_len || dst->sa_family == vc->src.ss_family)
		return 0;
	fprintf(stderr, "liboms: verbs: the GID named on %s (OMS_GID_INDEX) "
		"is an %s address, the listener's is %s: pick a GID of its "
		"family\n", vc->dev_name,
		vc->src.ss_family == AF_INET ? "IPv4" : "IPv6",
		dst->sa_family == AF_INET ? "IPv4" : "IPv6");
	return -EAFNOSUPPORT;
}

int vb_port_check(const struct vb_ctx *vc, const struct rdma_cm_id *id,
		  const char *what)
{
	if (!vc->port || id->port_num == vc->port)
		return 0;
	fprintf(stderr, "liboms: verbs: %s port %u of %s, not port %u "
		"(OMS_PORT, OMS_GID_INDEX)\n", what, id->port_num,
		vc->dev_name, vc->port);
	return -ENETUNREACH;
}

int vb_src_addr_bind(const struct vb_ctx *vc, const char *port,
		     struct sockaddr_storage *ss)
{
	char *end;
	unsigned long p = port ? strtoul(port, &end, 10) : 0;

	if (!vc->src_len)
		return 0;
	if (!port || !*port || *end || p > 65535)
		return -EINVAL;	/* a port number, with a GID's address */
	*ss = vc->src;
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)p);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)p);
	return 1;
}
