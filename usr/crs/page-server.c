// SPDX-License-Identifier: GPL-2.0
/*
 * See page-server.h. The protocol is CRIU 3.17's page server as its
 * lazy-pages daemon speaks it (criu/page-xfer.c, learned from the source):
 * 24-byte requests { u32 cmd, u32 nr_pages, u64 vaddr, u64 dst_id }.
 * PS_IOV_GET (7) asks for nr_pages at vaddr of process dst_id (its pid,
 * as in pagemap-<pid>.img; vaddr as the image has it); the answer is the
 * same header with cmd PS_IOV_ADD_F (6) | PE_PRESENT << 16 and nr_pages
 * no more than asked (lazy-pages asks again for the rest), then the
 * pages. Answers go in request order. PS_IOV_CLOSE and
 * PS_IOV_FORCE_CLOSE (0x1023, 0x1024; the latter on a socket given with
 * --ps-socket) end the session and want a 32-bit status back.
 *
 * Each chunk of a pages image (CRS_PAGE_CHUNK_BYTES, "chunk-xxh128"
 * records) is read and checked in full when any of its pages is asked
 * for, and its pages are served from that very read, kept in one of
 * CRS_PS_SLOTS slots (least recently used goes); a chunk that has left
 * the slots is read and checked again, so no byte is sent that a later
 * change of the file could have altered since its check. An answer
 * stops at the end of its chunk (lazy-pages asks again for the rest).
 * Nothing is sent from a chunk that did not match: the tree is killed
 * first, so the thread that faulted on it never gets it (it waits in the
 * kernel for the page until it dies).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "error.h"
#include "fdio.h"
#include "page-server.h"
#include "store.h"
#include "xxh128.h"

#define PS_IOV_ADD_F		6
#define PS_IOV_GET		7
#define PS_IOV_CLOSE		0x1023
#define PS_IOV_FORCE_CLOSE	0x1024
#define PS_CMD_MASK		0xffffu
#define PS_CMD_FLAGS_SHIFT	16

struct ps_iov {
	uint32_t cmd;
	uint32_t nr_pages;
	uint64_t vaddr;
	uint64_t dst_id;
};

_Static_assert(sizeof(struct ps_iov) == 24, "CRIU's page_server_iov is 24 bytes");

struct crs_ps_image {
	const char *name;		/* in m */
	int fd;
	uint64_t size;
	const struct crs_chunk **chunks;	/* in m, by offset, covering [0, size) */
	size_t nr_chunks;
	uint8_t *eager;			/* criu restore reads it: checked before the release */
	bool process;			/* a process's pagemap names it */
};

struct crs_ps_pagemap {
	pid_t pid;
	struct crs_pagemap pm;
	struct crs_ps_image *img;
};

bool crs_page_server_applies(const struct crs_meta *m)
{
	size_t i, j;

	if (m->parent[0] || !m->nr_chunks)
		return false;
	for (i = 0; i < m->nr_files; i++) {
		if (!crs_store_is_pages(m->files[i].name) || !m->files[i].size)
			continue;
		for (j = 0; j < m->nr_chunks; j++)
			if (!strcmp(m->chunks[j].name, m->files[i].name))
				break;
		if (j == m->nr_chunks)
			return false;
	}
	return true;
}

static int cmp_chunk(const void *a, const void *b)
{
	const struct crs_chunk *x = *(const struct crs_chunk *const *)a;
	const struct crs_chunk *y = *(const struct crs_chunk *const *)b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* The chunk records of img, in order, must cover it exactly. */
static int image_chunks(struct crs_ps_image *img, const struct crs_meta *m, char *err,
			size_t errlen)
{
	uint64_t at = 0;
	size_t i, n = 0;

	for (i = 0; i < m->nr_chunks; i++)
		n += !strcmp(m->chunks[i].name, img->name);
	img->chunks = calloc(n ? n : 1, sizeof(*img->chunks));
	img->eager = calloc(n ? n : 1, 1);
	if (!img->chunks || !img->eager)
		return crs_fail(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < m->nr_chunks; i++)
		if (!strcmp(m->chunks[i].name, img->name))
			img->chunks[img->nr_chunks++] = &m->chunks[i];
	qsort(img->chunks, img->nr_chunks, sizeof(*img->chunks), cmp_chunk);
	for (i = 0; i < img->nr_chunks; i++) {
		if (img->chunks[i]->off != at || img->chunks[i]->len > CRS_PAGE_CHUNK_BYTES ||
		    !img->chunks[i]->len || img->chunks[i]->len % CRS_PAGE_SIZE)
			break;
		at += img->chunks[i]->len;
	}
	if (i < img->nr_chunks || at != img->size)
		return crs_fail(err, errlen, -EBADMSG,
				"checkpoint %s is corrupt: the chunk records of %s do not cover it in whole pages",
				m->handle, img->name);
	return 0;
}

static struct crs_ps_image *find_image(struct crs_page_server *ps, uint32_t pages_id)
{
	char name[32];
	size_t i;

	snprintf(name, sizeof(name), "pages-%u.img", pages_id);
	for (i = 0; i < ps->nr_imgs; i++)
		if (!strcmp(ps->imgs[i].name, name))
			return &ps->imgs[i];
	return NULL;
}

/* Index of the chunk holding byte off of img. */
static size_t chunk_at(const struct crs_ps_image *img, uint64_t off)
{
	size_t lo = 0, hi = img->nr_chunks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->chunks[mid]->off <= off)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Mark the chunks that criu restore reads itself (not left to lazy-pages). */
static int mark_eager(struct crs_page_server *ps, struct crs_ps_pagemap *p, char *err,
		      size_t errlen)
{
	struct crs_ps_image *img = p->img;
	size_t i, c;

	if (p->pm.bytes > img->size)
		return crs_fail(err, errlen, -EBADMSG,
				"checkpoint %s is corrupt: %s is shorter than pagemap-%d.img says",
				ps->m->handle, img->name, (int)p->pid);
	img->process = true;
	for (i = 0; i < p->pm.nr; i++) {
		const struct crs_pagemap_entry *e = &p->pm.e[i];
		uint64_t len = (uint64_t)e->nr_pages * CRS_PAGE_SIZE;

		if (e->flags & CRS_PE_PARENT)
			return crs_fail(err, errlen, -EBADMSG,
					"checkpoint %s is corrupt: pagemap-%d.img refers to a parent it does not have",
					ps->m->handle, (int)p->pid);
		if (!(e->flags & CRS_PE_PRESENT) || (e->flags & CRS_PE_LAZY))
			continue;
		for (c = chunk_at(img, e->off); c < img->nr_chunks &&
		     img->chunks[c]->off < e->off + len; c++)
			img->eager[c] = 1;
	}
	return 0;
}

static int open_images(struct crs_page_server *ps, const char *dir, char *err, size_t errlen)
{
	const struct crs_meta *m = ps->m;
	size_t i;
	int r;

	ps->dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ps->dfd < 0)
		return crs_fail(err, errlen, -errno, "cannot open %s: %s", dir, strerror(errno));
	ps->imgs = calloc(m->nr_files ? m->nr_files : 1, sizeof(*ps->imgs));
	ps->pms = calloc(m->nr_files ? m->nr_files : 1, sizeof(*ps->pms));
	if (!ps->imgs || !ps->pms)
		return crs_fail(err, errlen, -ENOMEM, "out of memory");
	for (i = 0; i < m->nr_files; i++) {
		struct crs_ps_image *img = &ps->imgs[ps->nr_imgs];

		if (!crs_store_is_pages(m->files[i].name))
			continue;
		img->name = m->files[i].name;
		img->size = m->files[i].size;
		img->fd = openat(ps->dfd, img->name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		ps->nr_imgs++;
		if (img->fd < 0)
			return crs_fail(err, errlen, -errno, "cannot open %s/%s: %s", dir, img->name,
					strerror(errno));
		r = image_chunks(img, m, err, errlen);
		if (r)
			return r;
	}
	return 0;
}

static int load_pagemaps(struct crs_page_server *ps, char *err, size_t errlen)
{
	const struct crs_meta *m = ps->m;
	char why[256];
	size_t i;
	int pid, end, r;

	for (i = 0; i < m->nr_files; i++) {
		struct crs_ps_pagemap *p = &ps->pms[ps->nr_pms];
		const char *name = m->files[i].name;

		end = 0;
		if (sscanf(name, "pagemap-%d.img%n", &pid, &end) != 1 || name[end])
			continue;
		p->pid = pid;
		r = crs_pagemap_load(ps->dfd, name, &p->pm, why, sizeof(why));
		if (r)
			return crs_fail(err, errlen, r, "checkpoint %s: %s: %s", m->handle, name, why);
		ps->nr_pms++;
		p->img = p->pm.nr ? find_image(ps, p->pm.pages_id) : NULL;
		if (p->pm.nr && !p->img)
			return crs_fail(err, errlen, -ENODATA,
					"checkpoint %s is incomplete: pages-%u.img of %s is missing",
					m->handle, p->pm.pages_id, name);
		r = p->img ? mark_eager(ps, p, err, errlen) : 0;
		if (r)
			return r;
	}
	return 0;
}

/*
 * Kill every process of the tree (before anything of a bad chunk is
 * sent), keep the one-line reason, and stop serving.
 */
static void ps_fail(struct crs_page_server *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ps_fail(struct crs_page_server *ps, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	for (i = 0; i < ps->m->nr_procs; i++)
		kill(ps->m->procs[i].pid, SIGKILL);
	pthread_mutex_lock(&ps->lock);
	if (!ps->failed) {
		va_start(ap, fmt);
		vsnprintf(ps->err, sizeof(ps->err), fmt, ap);
		va_end(ap);
		ps->failed = true;
	}
	pthread_mutex_unlock(&ps->lock);
	shutdown(ps->sk, SHUT_RDWR);
}

/* The slot holding chunk c of img, else the least recently used one. */
static struct crs_ps_slot *slot_for(struct crs_page_server *ps, const struct crs_ps_image *img,
				    size_t c, bool *hit)
{
	struct crs_ps_slot *s, *lru = &ps->slots[0];

	for (s = ps->slots; s < ps->slots + CRS_PS_SLOTS; s++) {
		if (s->img == img && s->chunk == c) {
			*hit = true;
			return s;
		}
		if (s->used < lru->used)
			lru = s;
	}
	*hit = false;
	return lru;
}

/* Chunk c of img as read and checked just now or while still in a slot; NULL: failed. */
static const uint8_t *checked_chunk(struct crs_page_server *ps, struct crs_ps_image *img,
				    size_t c, const char *when)
{
	const struct crs_chunk *ch = img->chunks[c];
	uint8_t d[CRS_XXH128_LEN];
	struct crs_ps_slot *s;
	bool hit;

	s = slot_for(ps, img, c, &hit);
	s->used = ++ps->uses;
	if (hit)
		return s->data;
	s->img = NULL;
	if (crs_pread_all(img->fd, s->data, ch->len, ch->off)) {
		ps_fail(ps, "checkpoint %s is corrupt: cannot read bytes %" PRIu64 "-%" PRIu64
			" of %s: it is truncated or unreadable (%s: the restored processes were killed)",
			ps->m->handle, ch->off, ch->off + ch->len, img->name, when);
		return NULL;
	}
	crs_xxh128_buf(s->data, ch->len, d);
	if (memcmp(d, ch->digest, sizeof(d))) {
		ps_fail(ps, "checkpoint %s is corrupt: checksum of %s does not match in bytes %" PRIu64
			"-%" PRIu64 " (%s: the restored processes were killed)",
			ps->m->handle, img->name, ch->off, ch->off + ch->len, when);
		return NULL;
	}
	s->img = img;
	s->chunk = c;
	ps->chunks_checked++;
	return s->data;
}

/* The chunks criu restore reads itself, before the tree may run. */
static bool check_eager(struct crs_page_server *ps)
{
	static const char when[] = "found while criu restored it, before any instruction ran";
	size_t i, c;

	for (i = 0; i < ps->nr_imgs; i++) {
		struct crs_ps_image *img = &ps->imgs[i];

		for (c = 0; c < img->nr_chunks; c++)
			if ((img->eager[c] || !img->process) &&
			    !checked_chunk(ps, img, c, when))
				return false;
	}
	return true;
}

static struct crs_ps_pagemap *find_pagemap(struct crs_page_server *ps, uint64_t pid)
{
	size_t i;

	for (i = 0; i < ps->nr_pms; i++)
		if ((uint64_t)ps->pms[i].pid == pid)
			return &ps->pms[i];
	return NULL;
}

static bool serve_get(struct crs_page_server *ps, struct ps_iov *req)
{
	static const char when[] = "found when criu lazy-pages asked for those pages, before any was served";
	struct crs_ps_pagemap *p = find_pagemap(ps, req->dst_id);
	const struct crs_pagemap_entry *e = p ? crs_pagemap_find(&p->pm, req->vaddr) : NULL;
	const struct crs_chunk *ch;
	const uint8_t *data;
	uint64_t off, left;
	uint32_t nr;
	size_t c;

	if (!e || !(e->flags & CRS_PE_PRESENT) || req->vaddr % CRS_PAGE_SIZE || !req->nr_pages) {
		ps_fail(ps, "lazy restore: pid %" PRIu64 " needs %u pages at 0x%" PRIx64
			" that checkpoint %s does not hold: the restored processes were killed",
			req->dst_id, req->nr_pages, req->vaddr, ps->m->handle);
		return false;
	}
	off = e->off + (req->vaddr - e->vaddr);
	c = chunk_at(p->img, off);
	ch = p->img->chunks[c];
	/* No further than the entry, nor than the chunk (whole pages: image_chunks()). */
	left = e->nr_pages - (req->vaddr - e->vaddr) / CRS_PAGE_SIZE;
	if (left > (ch->off + ch->len - off) / CRS_PAGE_SIZE)
		left = (ch->off + ch->len - off) / CRS_PAGE_SIZE;
	nr = req->nr_pages < left ? req->nr_pages : (uint32_t)left;
	data = checked_chunk(ps, p->img, c, when);
	if (!data)
		return false;
	req->cmd = PS_IOV_ADD_F | (CRS_PE_PRESENT << PS_CMD_FLAGS_SHIFT);
	req->nr_pages = nr;
	if (crs_send_all(ps->sk, req, sizeof(*req)) ||
	    crs_send_all(ps->sk, data + (off - ch->off), (size_t)nr * CRS_PAGE_SIZE))
		return false;
	ps->served_pages += nr;
	return true;
}

static void *serve(void *arg)
{
	struct crs_page_server *ps = arg;
	struct ps_iov req;
	int32_t status = 0;
	bool ok = check_eager(ps);
	ssize_t n;

	pthread_mutex_lock(&ps->lock);
	ps->eager_done = true;
	ps->eager_ms = crs_clock_ms();
	pthread_cond_broadcast(&ps->cond);
	pthread_mutex_unlock(&ps->lock);
	while (ok) {
		n = recv(ps->sk, &req, sizeof(req), MSG_WAITALL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(req))
			break;		/* lazy-pages is gone (wait_done() says why) */
		switch (req.cmd & PS_CMD_MASK) {
		case PS_IOV_GET:
			ok = serve_get(ps, &req);
			break;
		case PS_IOV_CLOSE:
		case PS_IOV_FORCE_CLOSE:
			crs_send_all(ps->sk, &status, sizeof(status));
			ok = false;
			break;
		default:
			ps_fail(ps, "lazy restore: criu lazy-pages sent page-server command 0x%x, which crdbg does not serve: the restored processes were killed",
				req.cmd);
			ok = false;
		}
	}
	return NULL;
}

int crs_page_server_start(struct crs_page_server *ps, const char *dir, const struct crs_meta *m,
			  char *err, size_t errlen)
{
	int sv[2], r;
	size_t i;

	memset(ps, 0, sizeof(*ps));
	ps->m = m;
	ps->dfd = ps->sk = ps->peer = -1;
	pthread_mutex_init(&ps->lock, NULL);
	pthread_cond_init(&ps->cond, NULL);
	r = 0;
	for (i = 0; !r && i < CRS_PS_SLOTS; i++) {
		ps->slots[i].data = malloc(CRS_PAGE_CHUNK_BYTES);
		if (!ps->slots[i].data)
			r = crs_fail(err, errlen, -ENOMEM, "out of memory");
	}
	if (!r)
		r = open_images(ps, dir, err, errlen);
	if (!r)
		r = load_pagemaps(ps, err, errlen);
	if (!r && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		r = crs_fail(err, errlen, -errno, "cannot make a socket pair: %s", strerror(errno));
	if (r) {
		crs_page_server_stop(ps);
		return r;
	}
	ps->sk = sv[0];
	ps->peer = sv[1];
	r = pthread_create(&ps->thread, NULL, serve, ps);
	if (r) {
		crs_page_server_stop(ps);
		return crs_fail(err, errlen, -r, "cannot start the page server: %s", strerror(r));
	}
	ps->started = true;
	return 0;
}

int crs_page_server_peer(const struct crs_page_server *ps)
{
	return ps->peer;
}

void crs_page_server_peer_close(struct crs_page_server *ps)
{
	if (ps->peer >= 0)
		close(ps->peer);
	ps->peer = -1;
}

int crs_page_server_wait_eager(struct crs_page_server *ps, char *err, size_t errlen)
{
	pthread_mutex_lock(&ps->lock);
	while (ps->started && !ps->eager_done)
		pthread_cond_wait(&ps->cond, &ps->lock);
	pthread_mutex_unlock(&ps->lock);
	return crs_page_server_failed(ps, err, errlen);
}

int crs_page_server_failed(struct crs_page_server *ps, char *err, size_t errlen)
{
	int r = 0;

	pthread_mutex_lock(&ps->lock);
	if (ps->failed)
		r = crs_fail(err, errlen, -EBADMSG, "%s", ps->err);
	pthread_mutex_unlock(&ps->lock);
	return r;
}

void crs_page_server_stop(struct crs_page_server *ps)
{
	size_t i;

	if (!ps->m)
		return;
	if (ps->started) {
		shutdown(ps->sk, SHUT_RDWR);
		pthread_join(ps->thread, NULL);
		ps->started = false;
	}
	crs_page_server_peer_close(ps);
	if (ps->sk >= 0)
		close(ps->sk);
	for (i = 0; i < ps->nr_imgs; i++) {
		if (ps->imgs[i].fd >= 0)
			close(ps->imgs[i].fd);
		free(ps->imgs[i].chunks);
		free(ps->imgs[i].eager);
	}
	for (i = 0; i < ps->nr_pms; i++)
		crs_pagemap_free(&ps->pms[i].pm);
	free(ps->imgs);
	free(ps->pms);
	for (i = 0; i < CRS_PS_SLOTS; i++)
		free(ps->slots[i].data);
	if (ps->dfd >= 0)
		close(ps->dfd);
	pthread_mutex_destroy(&ps->lock);
	pthread_cond_destroy(&ps->cond);
	ps->m = NULL;
}
