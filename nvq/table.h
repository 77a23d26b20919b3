/*
 * table.h: the CLI's tables.  A listing names every column it can show;
 * --format picks some, in an order; on a terminal the lines are cut to its
 * width and states are coloured (never with NO_COLOR set, nor into a pipe
 * or a file, where lines are whole).
 */
#ifndef NVQ_TABLE_H
#define NVQ_TABLE_H

#include <stddef.h>

#define TABLE_MAX_COLS	32

struct table_col {
	const char	*name;		/* lower case in --format; upper case as a header */
	int		width;		/* padded to this, unless it is the last shown */
	int		right;		/* aligned right */
};

struct table {
	const struct table_col	*cols;
	int		ncols;
	int		sel[TABLE_MAX_COLS];	/* the columns shown, in order */
	int		nsel;
	int		width;		/* the terminal's columns; 0: no terminal */
	int		color;		/* colour the "state" column */
	char		*line;		/* a row being made */
	size_t		cap;
};

/*
 * The columns of format (comma-separated names; NULL: deflt's), checked
 * against cols; where stdout goes decides width and colour.  0, or -1 with
 * the error said (an unknown column, and those it knows).
 */
int	table_init(struct table *, const struct table_col *cols, int ncols, const char *deflt,
	    const char *format);
/* Whether a terminal may have colour: not with NO_COLOR set, nor on a dumb one. */
int	table_colors(void);
/* Whether column name is shown. */
int	table_shows(const struct table *, const char *name);
/* The header line. */
void	table_header(struct table *);
/* A row: cells[i] is column i's text (NULL: "-"), every column's, shown or not. */
void	table_row(struct table *, const char *const *cells);
void	table_free(struct table *);

#endif
