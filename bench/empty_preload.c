/* libnp-empty-preload.so: a shared library with nothing in it. Preloaded in
 * scripts/bench.sh's "preload" scenario beside np-exec's interposer, it is the
 * floor any LD_PRELOAD library costs every process of a tree (the loader
 * opening and mapping one more file), against which the interposer's own cost
 * is read (issue 19). */
int np_empty_preload_marker;
