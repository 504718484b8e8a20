// SPDX-License-Identifier: MIT
/*
 * Loading rdma-core and libnuma on demand; why in rdma_lib.h.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define VB_RDMA_NO_REDIRECT
#include "verbs/common/rdma_lib.h"

struct vb_rdma_lib vb_rdma;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int load_err;
static char load_why[192];

/* Without libnuma: no node is known, so nothing is placed or pinned. */
static int no_numa_available(void)
{
	return -1;
}

static int no_numa_max_node(void)
{
	return -1;
}

static void *no_numa_alloc_onnode(size_t size, int node)
{
	(void)size;
	(void)node;
	return NULL;
}

static void no_numa_free(void *mem, size_t size)
{
	(void)mem;
	(void)size;
}

static int no_numa_run_on_node(int node)
{
	(void)node;
	return -1;
}

static void *open_lib(const char *soname)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
		snprintf(load_why, sizeof(load_why), "%s", dlerror());
	return h;
}

/* Resolve every name of the library @h is; on a miss say which. */
#define SYM_GET(name)							\
	if (!err) {							\
		*(void **)&t->name = dlsym(h, #name);			\
		if (!t->name) {						\
			snprintf(load_why, sizeof(load_why),		\
				 "%s has no %s", lib, #name);		\
			err = -ELIBACC;					\
		}							\
	}

static int load_rdma(struct vb_rdma_lib *t)
{
	const char *lib = VB_LIBIBVERBS;
	void *h = open_lib(lib);
	int err = 0;

	if (!h)
		return -ELIBACC;
	VB_IBV_SYMS(SYM_GET)
	if (err)
		return err;
	lib = VB_LIBRDMACM;
	h = open_lib(lib);
	if (!h)
		return -ELIBACC;
	VB_CM_SYMS(SYM_GET)
	return err;
}

/* libnuma is optional: all of it or none of it. */
static void load_numa(struct vb_rdma_lib *t)
{
	const char *lib = VB_LIBNUMA;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	int err = 0;

	if (h) {
		VB_NUMA_SYMS(SYM_GET)
		if (!err)
			return;
		load_why[0] = '\0';	/* not a reason to refuse verbs */
	}
	t->numa_available = no_numa_available;
	t->numa_max_node = no_numa_max_node;
	t->numa_alloc_onnode = no_numa_alloc_onnode;
	t->numa_free = no_numa_free;
	t->numa_run_on_node = no_numa_run_on_node;
}

#undef SYM_GET

static void load_all(void)
{
	struct vb_rdma_lib t;

	memset(&t, 0, sizeof(t));
	load_err = load_rdma(&t);
	if (load_err)
		return;
	load_numa(&t);
	vb_rdma = t;
}

int vb_rdma_load(char *why, size_t whylen)
{
	pthread_once(&load_once, load_all);
	if (load_err && why && whylen)
		snprintf(why, whylen, "%s", load_why);
	return load_err;
}
