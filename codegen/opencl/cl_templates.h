/* The OpenCL C kernel templates of kernels_cl/, embedded at build time by cmake/embed.cmake
 * (the generated cl_templates.c in the build folder defines the table). */
#ifndef BYOCL_CL_TEMPLATES_H
#define BYOCL_CL_TEMPLATES_H

typedef struct byocl_cl_template {
    const char *name; /* file name without ".cl": "prelude", "conv2d", ... */
    const char *text;
} byocl_cl_template;

extern const byocl_cl_template clg_templates[];
extern const int clg_templates_count;

/* The template called `name`; NULL when there is none. */
const char *clg_template_text(const char *name);

#endif
