// SPDX-License-Identifier: GPL-2.0
/*
 * A library loaded on first use: its symbols resolved (a function and a
 * variable of libc), a missing library or symbol refused with a line
 * naming it, and a failure that stays a failure.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sdm/lazylib.h"

/*
 * libm, which this test does not link: lgamma() sets signgam, the
 * variable dlsym() gives is the one the library's own code writes.
 */
TEST(lazylib_resolves_functions_and_variables)
{
	static struct {
		double (*lgamma)(double);
		int *signgam;
	} m;
	static const struct lazylib_sym syms[] = {
		{ "lgamma", (void **)&m.lgamma },
		{ "signgam", (void **)&m.signgam },
	};
	static struct lazylib libm = LAZYLIB_INIT("libm.so.6", syms);

	ASSERT_EQ(0, lazylib_load(&libm, NULL, 0));
	EXPECT_LT(m.lgamma(1.0), 1e-12);	/* log(0!) */
	EXPECT_EQ(1, *m.signgam);
	m.lgamma(-0.5);				/* Gamma(-1/2) < 0 */
	EXPECT_EQ(-1, *m.signgam);
	ASSERT_EQ(0, lazylib_load(&libm, NULL, 0));	/* once loaded, stays */
}

TEST(lazylib_missing_library)
{
	static void *f;
	static const struct lazylib_sym syms[] = { { "f", &f } };
	static struct lazylib none = LAZYLIB_INIT("libcrdbg-no-such.so.9", syms);
	char why[256] = "";

	EXPECT_EQ(-ELIBACC, lazylib_load(&none, why, sizeof(why)));
	EXPECT_NE(NULL, strstr(why, "cannot load libcrdbg-no-such.so.9")) TH_LOG("%s", why);
	EXPECT_EQ(NULL, strchr(why, '\n'));
	why[0] = '\0';
	EXPECT_EQ(-ELIBACC, lazylib_load(&none, why, sizeof(why)));	/* said again */
	EXPECT_NE(NULL, strstr(why, "libcrdbg-no-such.so.9"));
	EXPECT_EQ(NULL, f);
}

TEST(lazylib_missing_symbol)
{
	static void *a, *b;
	static const struct lazylib_sym syms[] = {
		{ "getpid", &a },
		{ "crdbg_no_such_function", &b },
	};
	static struct lazylib libc = LAZYLIB_INIT("libc.so.6", syms);
	char why[256] = "";

	EXPECT_EQ(-ELIBACC, lazylib_load(&libc, why, sizeof(why)));
	EXPECT_STREQ("libc.so.6 has no crdbg_no_such_function", why);
	EXPECT_EQ(NULL, b);
}

TEST_HARNESS_MAIN
