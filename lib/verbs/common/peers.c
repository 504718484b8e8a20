// SPDX-License-Identifier: MIT
/*
 * The process's peers, and the puts its contexts have on the wire to
 * them: what a listener's agent needs for the class-2 hold (seed 002,
 * L23-L25; docs/dest-agent.md).
 *
 * Seed 002's node is, on verbs, the process: an agent holds a class-2
 * answer to node P while puts that a context of this process sent to P
 * (per-destination scope, or to anyone: global scope) before the answer
 * was read are not acknowledged.  A node is named by its IP address: the
 * requester's as the listener sees it, the listener's as an initiator
 * resolved it; the first VB_MAX_PEERS - 1 addresses get ids of their own,
 * every later one (and an address of another family) shares the last id,
 * which holds more than it must and never less.
 *
 * The data path pays one atomic add per put handed to its QP and one per
 * put completed, on its connection's own counters (struct vb_pw); the
 * agent reads them (vb_pw_scan) only when a class-2 answer is at stake,
 * under the registry's lock, which connect and disconnect also take.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>

#include "verbs/common/verbs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct in6_addr peer_addr[VB_MAX_PEERS];	/* IPv4 as v4-mapped */
static uint32_t npeers;
static struct vb_pw *pw_list;
static uint64_t pw_serial;

/* @sa as an IPv6 address (IPv4 v4-mapped); 0, or -EAFNOSUPPORT. */
static int addr_of(const struct sockaddr *sa, struct in6_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *v4 = (const void *)sa;

		out->s6_addr[10] = 0xff;
		out->s6_addr[11] = 0xff;
		memcpy(&out->s6_addr[12], &v4->sin_addr, 4);
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		*out = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		return 0;
	}
	return -EAFNOSUPPORT;
}

int vb_peer_id(const struct sockaddr *sa)
{
	struct in6_addr a;
	uint32_t i;
	int id;

	if (addr_of(sa, &a))
		return VB_MAX_PEERS - 1;
	pthread_mutex_lock(&lock);
	for (i = 0; i < npeers; i++)
		if (!memcmp(&peer_addr[i], &a, sizeof(a)))
			break;
	if (i == npeers && npeers < VB_MAX_PEERS - 1)
		peer_addr[npeers++] = a;
	id = i < npeers ? (int)i : VB_MAX_PEERS - 1;
	pthread_mutex_unlock(&lock);
	return id;
}

void vb_pw_add(struct vb_pw *pw, uint32_t peer)
{
	pthread_mutex_lock(&lock);
	pw->posted = pw->done = 0;
	pw->peer = peer;
	pw->serial = ++pw_serial;
	pw->next = pw_list;
	pw_list = pw;
	pthread_mutex_unlock(&lock);
}

void vb_pw_del(struct vb_pw *pw)
{
	struct vb_pw **p;

	pthread_mutex_lock(&lock);
	for (p = &pw_list; *p && *p != pw; p = &(*p)->next)
		;
	if (*p)
		*p = pw->next;
	pw->next = NULL;
	pw->serial = 0;
	pthread_mutex_unlock(&lock);
}

void vb_pw_scan(void (*fn)(void *arg, const struct vb_pw *pw,
			   uint64_t posted, uint64_t done), void *arg)
{
	pthread_mutex_lock(&lock);
	for (const struct vb_pw *pw = pw_list; pw; pw = pw->next) {
		/* done first: never more done than posted seen */
		uint64_t done = __atomic_load_n(&pw->done, __ATOMIC_ACQUIRE);
		uint64_t posted = __atomic_load_n(&pw->posted, __ATOMIC_ACQUIRE);

		fn(arg, pw, posted, done);
	}
	pthread_mutex_unlock(&lock);
}
