/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "sbx/base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sbx_base64_encoded_len(size_t len)
{
	size_t groups = len / 3 + (len % 3 != 0);

	return groups > (SIZE_MAX - 1) / 4 ? 0 : groups * 4;
}

/* Writes sbx_base64_encoded_len(len) characters to dst (no NUL). */
static void encode(char *dst, const uint8_t *in, size_t len)
{
	size_t i = 0;

	for (; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = alphabet[(v >> 6) & 63];
		*dst++ = alphabet[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);

		*dst++ = alphabet[v >> 18];
		*dst++ = alphabet[(v >> 12) & 63];
		*dst++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*dst++ = '=';
	}
}

char *sbx_base64_encode(const void *data, size_t len)
{
	size_t n = sbx_base64_encoded_len(len);
	char *out;

	if (!n && len)
		return NULL;
	out = malloc(n + 1);
	if (!out)
		return NULL;
	encode(out, data, len);
	out[n] = '\0';
	return out;
}

int sbx_base64_encode_buf(sbx_buf *out, const void *data, size_t len)
{
	const uint8_t *in = data;
	char chunk[4096];

	/* 3072 bytes make exactly 4096 characters: only the last chunk pads. */
	while (len > 0) {
		size_t take = len < 3072 ? len : 3072;
		int r;

		encode(chunk, in, take);
		r = sbx_buf_append(out, chunk, sbx_base64_encoded_len(take));
		if (r < 0)
			return r;
		in += take;
		len -= take;
	}
	return 0;
}

static int value_of(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

ssize_t sbx_base64_decode(char *s)
{
	size_t out = 0, chars = 0, pads = 0;
	uint32_t acc = 0;
	int bits = 0;

	for (const char *p = s; *p; p++) {
		int v;

		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			continue;
		if (*p == '=') {
			pads++;
			continue;
		}
		v = value_of(*p);
		if (v < 0 || pads)
			return -EINVAL;
		chars++;
		acc = (acc << 6 | (uint32_t)v) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			s[out++] = (char)((acc >> bits) & 0xff);
		}
	}
	/* One character of a group carries only 6 bits: never a whole byte. */
	if (chars % 4 == 1 || pads > 2 || (pads && (chars + pads) % 4 != 0))
		return -EINVAL;
	return (ssize_t)out;
}
