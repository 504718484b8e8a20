// SPDX-License-Identifier: MIT
/*
 * The sequenced class's chunk, as both writers lay it out: the portable
 * writer (lib/tx/queue.c) builds every chunk with it, the AVX2 one
 * (lib/tx/write_avx2.h) the last, partial chunk of a message.  The header
 * word's fields are lib/tx/tx_priv.h's; the bytes are docs/mmio-tx.md's.
 */
#include <string.h>

#include "tx/tx_priv.h"

void tx_build_seq_chunk(uint8_t *out, uint64_t base_hdr, uint16_t seq,
			int som, int eom, const uint8_t *pay, size_t n)
{
	uint64_t h = base_hdr | seq | ((uint64_t)n << TXS_LEN_SHIFT);

	if (som)
		h |= TXS_SOM;
	if (eom)
		h |= TXS_EOM;
	memset(out, 0, OMS_TX_CHUNK);
	memcpy(out + OMS_TX_HDR, pay, n);
	h |= tx_seq_check(h, (h & TXH_C) ?
			  tx_payload_hash(out + OMS_TX_HDR, OMS_TX_SEQ_PAYLOAD) : 0)
		<< TXS_CHECK_SHIFT;
	memcpy(out, &h, 8);
}
