#ifndef FX_LIB_H
#define FX_LIB_H
int fx_add(int a, int b);
int fx_count(int n);
int fx_check(unsigned seed);
int fx_unused(int x);
#endif
