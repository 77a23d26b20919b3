/*
 * opthelp.h: each option's help, for `nvq COMMAND --help` and nvq(1)
 * (opthelp.c).
 */
#ifndef NVQ_OPTHELP_H
#define NVQ_OPTHELP_H

#include <stdio.h>

/* "usage: nvq NAME USAGE", wrapped at 80 columns. */
void	opthelp_usage(FILE *, const char *name, const char *usage);
/* text wrapped at 80 columns. */
void	opthelp_text(FILE *, const char *text);
/* The rows of the long options in longs (space-separated) for command cmd, as --help shows them. */
void	opthelp_print(FILE *, const char *cmd, const char *longs);
/* Every row, as nvq(1)'s items. */
void	opthelp_man(FILE *);

#endif
