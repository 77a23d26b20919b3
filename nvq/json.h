/*
 * json.h: the JSON that nvq prints (--json), built as a small tree and
 * written on one line.  nvq runs once per submit: it links statically and
 * carries no JSON library of its own (Debian ships cJSON shared only).
 *
 * Every constructor returns a new value or NULL (out of memory); json_add
 * takes any value (NULL is ignored) and owns it from then on, also when it
 * fails; json_print writes a value ("null" for NULL) and json_free frees it.
 */
#ifndef NVQ_JSON_H
#define NVQ_JSON_H

#include <stdio.h>

struct json;

struct json	*json_object(void);
struct json	*json_array(void);
struct json	*json_string(const char *);
struct json	*json_number(double);
struct json	*json_bool(int);
struct json	*json_null(void);
/* A number already written as text ("12.500"), put out as it is. */
struct json	*json_raw(const char *);
/* v as the member key of object o, or as the next element of array o (key NULL). */
void		 json_add(struct json *o, const char *key, struct json *v);
/*
 * Writes v: strings escaped as JSON asks, and DEL, the C1 and format
 * controls too, which a terminal would act on; a byte that is not UTF-8
 * becomes \ufffd (esc.h).
 */
void		 json_print(FILE *, const struct json *v);
/* on: json_print writes each character past ASCII as \uXXXX (esc.h's ESC_ASCII). */
void		 json_set_ascii(int on);
void		 json_free(struct json *);

#endif
