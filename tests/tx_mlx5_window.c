// SPDX-License-Identifier: MIT
/*
 * The ConnectX window's gate: on a machine without a ConnectX (this one)
 * oms_tx_window_mlx5() fails with a precise errno and says why in one
 * line; with one, it maps the BlueFlame halves, refuses the sequenced
 * class and a chunk queue, and sends frames both ways.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "helpers.h"
#include "oms_tx.h"

TEST(gate_says_why)
{
	struct oms_tx_window *w = NULL;
	char why[256] = "";
	int r = oms_tx_window_mlx5(NULL, 1, why, sizeof(why), &w);

	if (r) {
		TH_LOG("no ConnectX window (%d): %s", r, why);
		ASSERT_TRUE(r == -ENOENT || r == -ENODEV || r == -EOPNOTSUPP ||
			    r == -EPERM || r == -EIO);
		ASSERT_NE(0, strlen(why));
		ASSERT_EQ(0, strncmp(why, "mlx5 window: ", 13));
		ASSERT_EQ(NULL, w);
		return;
	}
	{
		struct oms_tx_queue_attr qa = { .cls = OMS_TX_WEAK };
		struct oms_tx_queue *q;
		uint8_t frame[128] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		TH_LOG("ConnectX window: %zu bytes of BlueFlame",
		       oms_tx_window_len(w));
		ASSERT_EQ(OMS_TX_WIN_MLX5, oms_tx_window_kind(w));
		ASSERT_EQ(-EOPNOTSUPP, oms_tx_queue_create(w, &qa, &q));
		ASSERT_EQ(-EOPNOTSUPP, oms_tx_mlx5_send(w, OMS_TX_SEQUENCED,
							frame, 64));
		for (int i = 0; i < 1000; i++) {
			int s;

			do {
				s = oms_tx_mlx5_send(w, i & 1 ? OMS_TX_STRONG :
							OMS_TX_WEAK, frame, 64);
			} while (s == -EAGAIN);
			ASSERT_EQ(0, s);
		}
		/* 8 frames per doorbell, a short batch resumed where it ended */
		for (int i = 0; i < 100; i++) {
			struct iovec iov[8];
			int sent = 0, s;

			for (int k = 0; k < 8; k++)
				iov[k] = (struct iovec){ .iov_base = frame,
							 .iov_len = 64 };
			while (sent < 8) {
				s = oms_tx_mlx5_send_batch(w, i & 1 ?
							   OMS_TX_STRONG :
							   OMS_TX_WEAK,
							   iov + sent, 8 - sent);
				if (s == -EAGAIN)
					continue;
				ASSERT_GT(s, 0);
				sent += s;
			}
		}
		oms_tx_window_close(w);
	}
}

TEST(bad_arguments)
{
	struct oms_tx_window *w;
	char why[64] = "";
	uint8_t frame[64] = { 0 };
	struct iovec iov = { .iov_base = frame, .iov_len = 64 };

	ASSERT_EQ(-EINVAL, oms_tx_window_mlx5(NULL, 0, why, sizeof(why), &w));
	ASSERT_EQ(-EINVAL, oms_tx_window_mlx5(NULL, 1, NULL, 0, NULL));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send(NULL, OMS_TX_WEAK, frame, 64));
	ASSERT_EQ(0, oms_tx_window_mem(4096, &w));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send(w, OMS_TX_WEAK, frame, 64));
	/* not a ConnectX window, no window, no vector, n 0 or 17 */
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send_batch(w, OMS_TX_WEAK, &iov, 1));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send_batch(NULL, OMS_TX_WEAK, &iov, 1));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send_batch(w, OMS_TX_WEAK, NULL, 1));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send_batch(w, OMS_TX_WEAK, &iov, 0));
	ASSERT_EQ(-EINVAL, oms_tx_mlx5_send_batch(w, OMS_TX_WEAK, &iov,
						  OMS_TX_MLX5_BATCH_MAX + 1));
	oms_tx_window_close(w);
}

TEST_HARNESS_MAIN
