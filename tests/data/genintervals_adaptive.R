dir <- commandArgs(trailingOnly = TRUE)[1]  # holds ErrViewLib R/genIntervals.R and u.csv, x.csv, ln.csv
source(file.path(dir, "genIntervals.R"))
cases <- list(
  list(f="u", nBin=15, popMin=30, logBin=TRUE), list(f="u", nBin=20, popMin=100, logBin=TRUE),
  list(f="u", nBin=15, popMin=30, logBin=FALSE), list(f="x", nBin=15, popMin=30, logBin=FALSE),
  list(f="x", nBin=20, popMin=100, logBin=FALSE), list(f="ln", nBin=20, popMin=30, logBin=TRUE),
  list(f="ln", nBin=8, popMin=50, logBin=FALSE))
for (c in cases) {
  X <- scan(file.path(dir, paste0(c$f, ".csv")), quiet = TRUE)
  r <- genIntervals(X, nBin = c$nBin, equiPop = FALSE, popMin = c$popMin, logBin = c$logBin)
  cat(c$f, c$nBin, c$popMin, c$logBin, paste(r$lwindx - 1, collapse = " "), "\n")
}
