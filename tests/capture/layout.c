/*
 * layout.c - for tests/layout_native.sh: mappings the program does not place
 * itself, whose addresses it prints ("name 0xADDR" lines, then its
 * /proc/self/maps). Run natively under `setarch -R` they show where Linux puts
 * them; captured and read with `mmusim trace info --layout`, where mmusim's
 * kernel layout does. Hint-less anonymous mmaps of a 2 MiB multiple, of an odd
 * length and a small one; a file mapping of 4 MiB at offset 1 MiB; a hinted
 * mmap whose hint is taken; an mremap that must move; the heap.
 */
#define _GNU_SOURCE /* mremap */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define MIB (1UL << 20)

static void show(const char *name, void *p)
{
	printf("%s %p\n", name, p);
}

int main(int argc, char **argv)
{
	char buf[1 << 16];
	void *a, *b, *c, *f, *h, *m;
	ssize_t n;
	int fd;

	if (argc != 2)
		return 2;
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 5 * MIB))
		return 1;
	show("heap", sbrk(0));
	a = mmap(NULL, 64 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b = mmap(NULL, 3 * MIB + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	c = mmap(NULL, 12288, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	f = mmap(NULL, 4 * MIB, PROT_READ, MAP_PRIVATE, fd, MIB);
	h = mmap((void *)0x100000000000UL, 8 * MIB, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m = mremap(c, 12288, 40960, MREMAP_MAYMOVE);
	if (a == MAP_FAILED || b == MAP_FAILED || c == MAP_FAILED || f == MAP_FAILED ||
	    h == MAP_FAILED || m == MAP_FAILED)
		return 1;
	show("a", a);
	show("b", b);
	show("c", c);
	show("f", f);
	show("h", h);
	show("m", m);
	fflush(stdout);
	close(fd);
	fd = open("/proc/self/maps", O_RDONLY);
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	return 0;
}
