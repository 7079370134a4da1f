/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The options crdbg hands a criu restore started ahead of the metadata
 * (criu.h, crs_criu_restore_prestart()), as the lines of a CRIU
 * configuration file: CRIU reads $CRIU_CONFIG_FILE before anything else,
 * splits each line at its first blank into "--name" and a value, cuts it
 * at a '#' and reads quotes (criu/config.c).
 */
#ifndef CRDBG_CRS_CRIU_CONFIG_H
#define CRDBG_CRS_CRIU_CONFIG_H

#include <stddef.h>

/*
 * opts[0..nr) (each --name, --name=value, or --name then its value) and
 * the --inherit-fd pairs of inherit[0..nr_inherit) (tree-stdio.h; their
 * fd[0-2] renumbered to stdio_dup[], criu's copies of them) into *text
 * (malloc'd, *len bytes): "name=value" as given (getopt reads it so for
 * an optional value, --ext-unix-sk=ID), "name value" for a value given
 * apart. 0; -EINVAL when one cannot be carried (a blank, '#', a quote or
 * a backslash in it, an fd above 2 or one criu lacks: criu must then be
 * started with them on its command line); -ENOMEM.
 */
int crs_criu_config_text(char *const *opts, size_t nr, char *const *inherit, size_t nr_inherit,
			 const int stdio_dup[3], char **text, size_t *len);

#endif /* CRDBG_CRS_CRIU_CONFIG_H */
