# genIntervals(M, N, popMin = 1) of ErrViewLib (P. Pernot, commit e87ed279, GPL-3) on a sweep of
# (M, N) pairs, for tests/test_parity.py (see tests/data/README.md):
#
#   Rscript errviewlib_cuts.R DIR PAIRS > errviewlib_cuts.txt
#
# DIR holds ErrViewLib's R/genIntervals.R and R/hdQuantiles.R; PAIRS is a file of lines "M N"
# (the pairs of errviewlib_cuts.txt, the part of a planned larger sweep that ran within the
# time we had: every pair M = 2 ... 1431, N = 2 ... min(M, 20), and M = 1432 and 2201 ... 2209
# with the first N; odd M = 3001 ... 5075 with N = 2 and 20; the first 880 of 1000 pairs
# M ~ U{3001..20000}, N ~ U{2..60} drawn with set.seed(20251125)). Output: one line per pair, M N and the 0-based bins i whose start R puts
# at floor(M*i/N + 1/2) - 1 (all other starts equal floor(M*i/N + 1/2)), '-' when none.
#
# Two speed-ups, each checked against the original on random inputs before the sweep: elimna
# without its loop over rows (same value for NA-free input), and hd() summing only the ranks
# whose weight is not exactly 0 (pbeta exactly 0 or exactly 1 at both ends of the rank's
# interval): the remaining terms and their order are the original's, so the value is identical.
args <- commandArgs(trailingOnly = TRUE); dir <- args[1]
src <- function(f) eval(parse(text = gsub("(ErrViewLib|nptest|DescTools|moments|normalp)::", "",
                                          readLines(file.path(dir, f), warn = FALSE))), envir = globalenv())
src("genIntervals.R"); src("hdQuantiles.R")
elimna_orig <- elimna
elimna <- function(m) { if (is.null(dim(m))) m <- as.matrix(m); m[rowSums(is.na(m)) == 0, ] }
stopifnot(identical(elimna(1:1000), elimna_orig(1:1000)))
hd_orig <- hd
hd <- function(x, q = 0.5, na.rm = TRUE) {
  n <- length(x); m1 <- (n + 1) * q; m2 <- (n + 1) * (1 - q)
  F <- function(k) pbeta(k / n, m1, m2)
  lo <- 0L; hi <- n                     # largest k0 with F(k0) == 0
  while (hi - lo > 1L) { mid <- (lo + hi) %/% 2L; if (F(mid) == 0) lo <- mid else hi <- mid }
  k0 <- lo
  lo <- k0; hi <- n                     # smallest k1 with F(k1) == 1
  while (hi - lo > 1L) { mid <- (lo + hi) %/% 2L; if (F(mid) == 1) hi <- mid else lo <- mid }
  k1 <- hi
  vec <- (k0 + 1L):k1
  w <- pbeta(vec / n, m1, m2) - pbeta((vec - 1) / n, m1, m2)
  sum(w * vec)
}
set.seed(1)
for (t in 1:300) { M <- sample(2:6000, 1); q <- runif(1); stopifnot(identical(hd(1:M, q), hd_orig(1:M, q))) }
for (M in c(41L, 839L, 13885L, 2L, 3L)) stopifnot(identical(hd(1:M, 0.5), hd_orig(1:M, 0.5)))
pairs <- read.table(args[2], col.names = c("M", "N"))
cat("# ErrViewLib genIntervals(M, N, popMin = 1) on 30k (M, N) pairs: tests/data/errviewlib_cuts.R, see README.md.\n")
cat("# One line per pair: M N and the 0-based bins i whose start R puts at floor(M*i/N + 1/2) - 1\n")
cat("# (every other start equals floor(M*i/N + 1/2)); '-' when none.\n")
for (r in seq_len(nrow(pairs))) {
  M <- as.integer(pairs$M[r]); N <- as.integer(pairs$N[r])
  st <- genIntervals(M, N, popMin = 1)$lwindx - 1L
  dev <- which(st != (2 * M * (0:(N - 1)) + N) %/% (2 * N)) - 1L
  cat(paste(M, N, if (length(dev)) paste(dev, collapse = ",") else "-"), "\n", sep = "")
}
