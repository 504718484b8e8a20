/* SPDX-License-Identifier: MIT */
/*
 * rdma-core (libibverbs, librdmacm) and libnuma, loaded at run time.
 *
 * liboms.so does not name these libraries as dependencies: a program that
 * only uses the emulated device must run where rdma-core is not installed
 * (a container, a chroot, a build machine).  The verbs backend loads them
 * the first time a context asks for verbs (vb_rdma_load()), the way
 * libibverbs itself loads its providers and lib/tx/window_mlx5.c loads
 * mlx5dv.  libnuma is optional even then: without it the backend's
 * buffers come from the heap and the listener is not pinned.
 *
 * The headers are still needed at build time (types, and the data path
 * calls ibv_post_send / ibv_poll_cq, which are inline calls through the
 * provider's table and need no symbol).  Every other call that lib/verbs/
 * makes goes through the table below: the names are redirected to it by
 * the #defines at the end of this file, so the code reads as plain verbs
 * and the linker (-Wl,--no-undefined on liboms.so, with no -libverbs)
 * catches a call that escaped the table.
 *
 * Not exported; lib/verbs/ and the backend choice in lib/core/ctx.c only.
 */
#ifndef OMS_RDMA_LIB_H
#define OMS_RDMA_LIB_H

#include <stddef.h>

#include <infiniband/verbs.h>
#include <numa.h>
#include <rdma/rdma_cma.h>

/* The sonames, as Debian's libibverbs1, librdmacm1 and libnuma1 ship. */
#define VB_LIBIBVERBS	"libibverbs.so.1"
#define VB_LIBRDMACM	"librdmacm.so.1"
#define VB_LIBNUMA	"libnuma.so.1"

#define VB_IBV_SYMS(X)							\
	X(ibv_get_device_name) X(ibv_query_device) X(ibv_alloc_pd)	\
	X(ibv_dealloc_pd) X(ibv_reg_mr) X(ibv_dereg_mr)			\
	X(ibv_create_cq) X(ibv_destroy_cq) X(ibv_modify_qp)		\
	X(ibv_resize_cq)						\
	X(ibv_create_comp_channel) X(ibv_destroy_comp_channel)		\
	X(ibv_get_cq_event) X(ibv_ack_cq_events) X(_ibv_query_gid_ex)

#define VB_CM_SYMS(X)							\
	X(rdma_get_devices) X(rdma_free_devices)			\
	X(rdma_create_event_channel) X(rdma_destroy_event_channel)	\
	X(rdma_get_cm_event) X(rdma_ack_cm_event)			\
	X(rdma_create_id) X(rdma_destroy_id) X(rdma_set_option)		\
	X(rdma_getaddrinfo) X(rdma_freeaddrinfo) X(rdma_bind_addr)	\
	X(rdma_resolve_addr) X(rdma_resolve_route) X(rdma_listen)	\
	X(rdma_create_qp) X(rdma_destroy_qp) X(rdma_connect)		\
	X(rdma_accept) X(rdma_reject) X(rdma_disconnect)		\
	X(rdma_notify)

#define VB_NUMA_SYMS(X)							\
	X(numa_available) X(numa_max_node) X(numa_alloc_onnode)		\
	X(numa_free) X(numa_run_on_node) X(numa_node_to_cpus)		\
	X(numa_allocate_cpumask) X(numa_bitmask_isbitset)		\
	X(numa_bitmask_free)

/* __typeof__ of the headers' own prototypes: a call through the table is
 * type-checked exactly as a direct call would be. */
#define VB_SYM_FIELD(name) __typeof__(&name) name;

struct vb_rdma_lib {
	VB_IBV_SYMS(VB_SYM_FIELD)
	VB_CM_SYMS(VB_SYM_FIELD)
	VB_NUMA_SYMS(VB_SYM_FIELD)
};

/* Filled by a successful vb_rdma_load(); read-only afterwards. */
extern struct vb_rdma_lib vb_rdma;

/*
 * Load libibverbs and librdmacm (and libnuma if present) once per process;
 * later calls return the first call's result.  0, or -ELIBACC with the
 * reason (which library, dlerror()) in @why.  The libraries stay loaded
 * until the process exits: providers and librdmacm's threads may still
 * refer to them.
 */
int vb_rdma_load(char *why, size_t whylen);

#ifndef VB_RDMA_NO_REDIRECT
#undef ibv_reg_mr	/* the header's macro picks an inline wrapper */
#define ibv_get_device_name		(*vb_rdma.ibv_get_device_name)
#define ibv_query_device		(*vb_rdma.ibv_query_device)
#define ibv_alloc_pd			(*vb_rdma.ibv_alloc_pd)
#define ibv_dealloc_pd			(*vb_rdma.ibv_dealloc_pd)
#define ibv_reg_mr			(*vb_rdma.ibv_reg_mr)
#define ibv_dereg_mr			(*vb_rdma.ibv_dereg_mr)
#define ibv_create_cq			(*vb_rdma.ibv_create_cq)
#define ibv_destroy_cq			(*vb_rdma.ibv_destroy_cq)
#define ibv_resize_cq			(*vb_rdma.ibv_resize_cq)
#define ibv_modify_qp			(*vb_rdma.ibv_modify_qp)
#define ibv_create_comp_channel		(*vb_rdma.ibv_create_comp_channel)
#define ibv_destroy_comp_channel	(*vb_rdma.ibv_destroy_comp_channel)
#define ibv_get_cq_event		(*vb_rdma.ibv_get_cq_event)
#define ibv_ack_cq_events		(*vb_rdma.ibv_ack_cq_events)
/* ibv_query_gid_ex() is an inline wrapper of this one: call it as such */
#define _ibv_query_gid_ex		(*vb_rdma._ibv_query_gid_ex)
#define rdma_get_devices		(*vb_rdma.rdma_get_devices)
#define rdma_free_devices		(*vb_rdma.rdma_free_devices)
#define rdma_create_event_channel	(*vb_rdma.rdma_create_event_channel)
#define rdma_destroy_event_channel	(*vb_rdma.rdma_destroy_event_channel)
#define rdma_get_cm_event		(*vb_rdma.rdma_get_cm_event)
#define rdma_ack_cm_event		(*vb_rdma.rdma_ack_cm_event)
#define rdma_create_id			(*vb_rdma.rdma_create_id)
#define rdma_destroy_id			(*vb_rdma.rdma_destroy_id)
#define rdma_set_option			(*vb_rdma.rdma_set_option)
#define rdma_getaddrinfo		(*vb_rdma.rdma_getaddrinfo)
#define rdma_freeaddrinfo		(*vb_rdma.rdma_freeaddrinfo)
#define rdma_bind_addr			(*vb_rdma.rdma_bind_addr)
#define rdma_resolve_addr		(*vb_rdma.rdma_resolve_addr)
#define rdma_resolve_route		(*vb_rdma.rdma_resolve_route)
#define rdma_listen			(*vb_rdma.rdma_listen)
#define rdma_create_qp			(*vb_rdma.rdma_create_qp)
#define rdma_destroy_qp			(*vb_rdma.rdma_destroy_qp)
#define rdma_connect			(*vb_rdma.rdma_connect)
#define rdma_accept			(*vb_rdma.rdma_accept)
#define rdma_reject			(*vb_rdma.rdma_reject)
#define rdma_disconnect			(*vb_rdma.rdma_disconnect)
#define rdma_notify			(*vb_rdma.rdma_notify)
#define numa_available			(*vb_rdma.numa_available)
#define numa_max_node			(*vb_rdma.numa_max_node)
#define numa_alloc_onnode		(*vb_rdma.numa_alloc_onnode)
#define numa_free			(*vb_rdma.numa_free)
#define numa_run_on_node		(*vb_rdma.numa_run_on_node)
#define numa_node_to_cpus		(*vb_rdma.numa_node_to_cpus)
#define numa_allocate_cpumask		(*vb_rdma.numa_allocate_cpumask)
#define numa_bitmask_isbitset		(*vb_rdma.numa_bitmask_isbitset)
#define numa_bitmask_free		(*vb_rdma.numa_bitmask_free)
#endif

#endif /* OMS_RDMA_LIB_H */
