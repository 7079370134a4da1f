// SPDX-License-Identifier: GPL-2.0
/*
 * XXH3-128 of a file, in its canonical (big-endian) byte order, with the
 * fastest code this CPU runs: AVX2 where it has it, else 64-bit scalar.
 * Not Debian's libxxhash, which is built for SSE2: measured in the QEMU/TCG
 * guest (where every benchmark runs) it hashed 223 MB/s against 913
 * scalar and 932 AVX2, because TCG emulates SSE2 through helpers but
 * translates 64-bit multiplies to host instructions; on the host, 6.8
 * GB/s (SSE2), 5.3 (scalar), 11.6 (AVX2). All give the same digest.
 */
#include "xxh128.h"

int crs_xxh128_file_scalar(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			   uint64_t *ret_size);
int crs_xxh128_file_avx2(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
			 uint64_t *ret_size);

void crs_xxh128_buf_scalar(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN]);
void crs_xxh128_buf_avx2(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN]);
int crs_xxh128_file_chunked_scalar(int dirfd, const char *name, uint64_t chunk,
				   crs_xxh128_chunk_fn cb, void *arg,
				   uint8_t out[CRS_XXH128_LEN], uint64_t *ret_size);
int crs_xxh128_file_chunked_avx2(int dirfd, const char *name, uint64_t chunk,
				 crs_xxh128_chunk_fn cb, void *arg,
				 uint8_t out[CRS_XXH128_LEN], uint64_t *ret_size);

int crs_xxh128_file(int dirfd, const char *name, uint8_t out[CRS_XXH128_LEN],
		    uint64_t *ret_size)
{
	if (__builtin_cpu_supports("avx2"))
		return crs_xxh128_file_avx2(dirfd, name, out, ret_size);
	return crs_xxh128_file_scalar(dirfd, name, out, ret_size);
}

void crs_xxh128_buf(const void *buf, size_t len, uint8_t out[CRS_XXH128_LEN])
{
	if (__builtin_cpu_supports("avx2"))
		crs_xxh128_buf_avx2(buf, len, out);
	else
		crs_xxh128_buf_scalar(buf, len, out);
}

int crs_xxh128_file_chunked(int dirfd, const char *name, uint64_t chunk,
			    crs_xxh128_chunk_fn cb, void *arg, uint8_t out[CRS_XXH128_LEN],
			    uint64_t *ret_size)
{
	if (__builtin_cpu_supports("avx2"))
		return crs_xxh128_file_chunked_avx2(dirfd, name, chunk, cb, arg, out, ret_size);
	return crs_xxh128_file_chunked_scalar(dirfd, name, chunk, cb, arg, out, ret_size);
}
