# Reference numbers of ErrViewLib (P. Pernot, github.com/ppernot/ErrViewLib, commit e87ed279,
# GPL-3) for tests/test_parity.py; see tests/data/README.md.
#
#   Rscript errviewlib_parity.R DIR > errviewlib_parity.txt
#
# DIR holds ErrViewLib's R/genIntervals.R, R/hdQuantiles.R, R/calibScores.R, R/plotLZV.R,
# R/plotLZISD.R, R/stats.R, R/testCovIntProb.R, R/plotConfidence.R, R/plotLCP.R and
# R/plotStratZV.R and R/plotCalCurve.R, nptest's
# R/np.boot.R (N. E. Helwig, CRAN nptest 1.1, GPL-2) and the inputs qm9.csv, synth.csv written by
# errviewlib_parity_inputs.py. The `pkg::` prefixes are stripped when the files are sourced, so
# the few functions used from moments and DescTools are defined here, copied from those packages
# (moments 0.14.1 `moment`/`all.moments`, L. Komsta and F. Novomestky, GPL >= 2; DescTools
# 0.99.59 `BinomCI`, methods "wilson", "wilsoncc", "agresti-coull", "jeffreys" and
# "clopper-pearson", A. Signorell et al., GPL >= 2). Output: one line per quantity,
# `key v1 v2 ...`, 17 significant digits. Takes about 15 minutes (the bootstrap sections).
dir <- commandArgs(trailingOnly = TRUE)[1]
src <- function(f) eval(parse(text = gsub("(ErrViewLib|nptest|DescTools|moments|normalp)::", "",
                                          readLines(file.path(dir, f)))), envir = globalenv())
for (f in c("genIntervals.R", "hdQuantiles.R", "calibScores.R", "plotLZV.R", "plotLZISD.R", "stats.R",
           "testCovIntProb.R", "plotConfidence.R", "plotLCP.R", "plotStratZV.R", "plotCalCurve.R",
           "plotLRR.R", "plotAGVZMS.R", "np.boot.R"))
  src(f)
library(boot)

moment <- function(x, order = 1, central = FALSE, absolute = FALSE, na.rm = FALSE) {
  if (na.rm) x <- x[!is.na(x)]
  if (central) x <- x - mean(x)
  if (absolute) x <- abs(x)
  sum(x^order) / length(x)
}
all.moments <- function(x, order.max = 2, central = FALSE, absolute = FALSE, na.rm = FALSE) {
  mu <- rep(0, order.max + 1)
  for (order in 0:order.max) mu[order + 1] <- moment(x, order, central, absolute, na.rm)
  mu
}
BinomCI <- function(x, n, conf.level = 0.95, method = "wilson") {
  # DescTools::BinomCI, two-sided, std_est = TRUE, methods used by ErrViewLib (iBinomCI branches)
  one <- function(x, n) {
    alpha <- 1 - conf.level
    kappa <- qnorm(1 - alpha/2)
    p.hat <- x/n; q.hat <- 1 - p.hat
    switch(method,
      "wilson" = {
        term1 <- (x + kappa^2/2)/(n + kappa^2)
        term2 <- kappa*sqrt(n)/(n + kappa^2)*sqrt(p.hat*q.hat + kappa^2/(4*n))
        CI.lower <- max(0, term1 - term2); CI.upper <- min(1, term1 + term2)
      },
      "wilsoncc" = {
        lci <- (2*x + kappa**2 - 1 - kappa*sqrt(kappa**2 - 2 - 1/n + 4*p.hat*(n*q.hat + 1))) / (2*(n + kappa**2))
        uci <- (2*x + kappa**2 + 1 + kappa*sqrt(kappa**2 + 2 - 1/n + 4*p.hat*(n*q.hat - 1))) / (2*(n + kappa**2))
        CI.lower <- max(0, ifelse(p.hat == 0, 0, lci)); CI.upper <- min(1, ifelse(p.hat == 1, 1, uci))
      },
      "agresti-coull" = {
        x.tilde <- x + kappa^2/2; n.tilde <- n + kappa^2
        p.tilde <- x.tilde/n.tilde; q.tilde <- 1 - p.tilde
        term2 <- kappa*sqrt(p.tilde*q.tilde)/sqrt(n.tilde)
        CI.lower <- max(0, p.tilde - term2); CI.upper <- min(1, p.tilde + term2)
      },
      "jeffreys" = {
        CI.lower <- if (x == 0) 0 else qbeta(alpha/2, x + 0.5, n - x + 0.5)
        CI.upper <- if (x == n) 1 else qbeta(1 - alpha/2, x + 0.5, n - x + 0.5)
      },
      "clopper-pearson" = {
        CI.lower <- qbeta(alpha/2, x, n - x + 1); CI.upper <- qbeta(1 - alpha/2, x + 1, n - x)
      })
    c(est = p.hat, lwr.ci = CI.lower, upr.ci = CI.upper)
  }
  t(mapply(one, x, n))
}

# normalp 0.7.2 `qnormp` and `rnormp` (method "def"), A. M. Mineo, GPL: the exponential power
# distribution of ErrViewLib's "Normp4" and "Laplace" (argument checks left out)
qnormp <- function(pr, mu = 0, sigmap = 1, p = 2) {
  zp <- 2 * ifelse(pr < 0.5, 0.5 - pr, pr - 0.5)
  z <- qgamma(zp, shape = 1/p, scale = p)^(1/p)
  mu + ifelse(pr < 0.5, -z, z) * sigmap
}
rnormp <- function(n, mu = 0, sigmap = 1, p = 2) {
  z <- rgamma(n, shape = 1/p, scale = p)^(1/p)
  mu + ifelse(runif(n) < 0.5, -z, z) * sigmap
}
# the graphical parameters read by the functions that always draw (plotAGV, plotAGVZMS)
gPlot <- list(cols = 1:7, cols_tr = 1:7, cols_tr2 = 1:7, mar = c(3, 3, 3, .5), mgp = c(2, .75, 0), tcl = -0.5,
              cex = 1, lwd = 1)
# a local variable of a function at its exit (for results ErrViewLib computes but does not return)
capture <- function(fname, vars) {
  invisible(trace(fname, exit = substitute(assign(".captured", mget(V), envir = globalenv()), list(V = vars)),
                  print = FALSE, where = globalenv()))
}

out <- function(key, v) cat(key, sprintf("%.17g", as.numeric(v)), "\n")

# 1. Equal-count cuts of genIntervals (0-based bin starts), popMin = 1 (no reduction)
for (M in 2:120) for (N in 1:min(M, 16))
  out(paste0("cuts_", M, "_", N), genIntervals(M, N, popMin = 1)$lwindx - 1)
for (mn in list(c(1000, 7), c(1200, 8), c(13885, 15), c(13885, 20), c(4321, 13)))
  out(paste0("cuts_", mn[1], "_", mn[2]), genIntervals(as.integer(mn[1]), mn[2], popMin = 1)$lwindx - 1)

for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  E <- d$E; u <- d$u; x <- d$x; Z <- E / u
  k <- function(s) paste0(set, "_", s)

  # 2. calibScores (ENCE, UCE (plain mean over bins), ZMSE = Su) on 20 bins of u and of x
  cs <- calibScores(E, u, X = x, nBin = 20)
  for (s in names(cs)) out(k(paste0("calibScores_", s)), cs[[s]])

  # 3. local statistics by u and by x, default bins, deterministic intervals
  for (v in c("u", "x")) {
    X <- if (v == "u") u else x
    r <- plotLZV(X, Z, method = "cho", plot = FALSE, score = TRUE)
    for (s in c("mint", "pc", "pcl", "pcu", "meanP", "meanPl", "meanPu", "ZVE", "ZVEUp", "ZVM", "ZVMs",
                "fVal", "lofVal", "upfVal"))
      out(k(paste0("LZVcho_", v, "_", s)), r[[s]])
    r <- plotLZM(X, Z, plot = FALSE)
    for (s in c("mint", "pc", "pcl", "pcu", "meanP", "meanPl", "meanPu", "fVal", "lofVal", "upfVal"))
      out(k(paste0("LZM_", v, "_", s)), r[[s]])
    r <- plotLZISD(X, Z, method = "cho", plot = FALSE, score = TRUE)
    for (s in c("pc", "pcl", "pcu", "ZISDE", "ZISDEUp", "ZISDM", "ZISDMs"))
      out(k(paste0("LZISDcho_", v, "_", s)), r[[s]])
    r <- plotLZMS(X, Z, method = "stud", plot = FALSE, score = TRUE)
    for (s in c("pc", "pcl", "pcu", "ZVE", "ZVEUp", "ZVM", "ZVMs", "fVal", "lofVal", "upfVal"))
      out(k(paste0("LZMSstud_", v, "_", s)), r[[s]])
    # skewgm of Z^2 per bin (plotLZMS's skewness flag, threshold skewup = 0.8)
    iv <- genIntervals(length(Z), max(min(floor(length(Z) / 150), 15), 2), popMin = 100)
    zo <- Z[order(X)]
    out(k(paste0("skewgm_", v)), sapply(1:iv$nbr, function(i) skewgm(zo[iv$lwindx[i]:iv$upindx[i]]^2)))
  }
}

# 4. Bootstrap intervals (Monte Carlo): 20 R runs of 5000 resamples on the synthetic set, by u;
#    mean and standard deviation over the runs of each interval limit
d <- read.csv(file.path(dir, "synth.csv")); E <- d$E; u <- d$u; Z <- E / u
runs <- function(f) { r <- sapply(1:20, function(i) { set.seed(i); f() }); rbind(rowMeans(r), apply(r, 1, sd)) }
r <- runs(function() { a <- plotLZV(u, Z, method = "bootstrap", nBoot = 5000, plot = FALSE); c(a$pcl, a$pcu) })
out("synth_LZVboot_u_pc", plotLZV(u, Z, method = "cho", plot = FALSE)$pc)
out("synth_LZVboot_u_mean", r[1, ]); out("synth_LZVboot_u_sd", r[2, ])
r <- runs(function() { a <- plotLZISD(u, Z, method = "bootstrap", nBoot = 5000, plot = FALSE); c(a$pcl, a$pcu) })
out("synth_LZISDboot_u_mean", r[1, ]); out("synth_LZISDboot_u_sd", r[2, ])
r <- runs(function() { a <- plotLRCE(u, u, E, nBoot = 5000, plot = FALSE); c(a$pc, a$pcl, a$pcu) })
out("synth_LRCE_u_mean", r[1, ]); out("synth_LRCE_u_sd", r[2, ])
# 5. calibScoresProbRef's reference sample includes the data's own scores (row 1 of 1 + nMC):
#    QM9_E with E*1.3, 20 bins, nMC = 1000, normal errors (quant = TRUE: with FALSE the function
#    stops on an undefined qScores)
d <- read.csv(file.path(dir, "qm9.csv")); E <- 1.3 * d$E; u <- d$u
set.seed(1)
ref <- calibScoresProbRef(E, u, nBin = 20, nMC = 1000, quant = TRUE)
gs <- calibScores(E, u, nBin = 20)
for (s in c("Su", "enceu", "uceu")) {
  out(paste0("probref_data_", s), gs[[s]])
  out(paste0("probref_mean_", s), ref$meanRefScores[[s]])
  out(paste0("probref_sd_", s), ref$sdRefScores[[s]])
}
# 6. testCovIntProb (exact binomial test of the fraction of valid bins) on plotLZV's results
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv"))); Z <- d$E / d$u
  for (v in c("u", "x")) {
    r <- plotLZV(if (v == "u") d$u else d$x, Z, method = "cho", plot = FALSE)
    t <- testCovIntProb(r, silent = TRUE)
    out(paste0(set, "_testCovIntProb_", v), c(t$success, t$trials, t$estimate, t$conf.int, t$p.value))
  }
}
# 7. Confidence curves: Sconf of the data (RMSE, MAE; plain and normalised), AUCO (oracle), and
#    the DFPR and UP95 of the uniform reference (10 runs of 500 draws: mean and sd)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv"))); E <- d$E; u <- d$u
  Ed <- E[order(u, decreasing = TRUE)]
  out(paste0(set, "_Sconf_rmse"), Sconf(Ed, 0:99, rmse, FALSE))
  out(paste0(set, "_Sconf_mae_norm"), Sconf(Ed, 0:99, mue, TRUE))
  out(paste0(set, "_AUCO_rmse"), plotConfidence(E, u, stat = rmse, normalize = FALSE, oracle = TRUE,
                                                 plot = FALSE)$AUCO)
}
d <- read.csv(file.path(dir, "synth.csv"))
r <- sapply(1:10, function(i) {
  set.seed(100 + i)
  a <- plotConfidence(d$E, d$u, stat = rmse, normalize = FALSE, oracle = FALSE, probref = TRUE,
                      dist_probref = "Uniform", rep_probref = 500, plot = FALSE)
  c(a$DFPR, a$UP95)
})
out("synth_CCuniform_mean", rowMeans(r)); out("synth_CCuniform_sd", apply(r, 1, sd))
# 8. plotLCP with a user U matrix (two columns: normal U_0.5 and a U_0.95 from another rule) binned
#    on x, for each binomial interval method
d <- read.csv(file.path(dir, "synth.csv"))
U <- cbind(d$u * qnorm(0.75), 1.8 * d$u + 0.3 * d$x)
for (m in c("wilson", "wilsoncc", "clopper-pearson", "agresti-coull", "jeffreys")) {
  r <- plotLCP(d$E, U, ordX = d$x, prob = c(0.5, 0.95), binomCI = m, plot = FALSE)
  for (s in c("mint", "pc", "pcl", "pcu", "meanP")) out(paste0("synth_LCP_", m, "_", s), t(r[[s]]))
}
# 10. Stratified statistics on a discrete feature: x of the synthetic set rounded to 0.05 (21
#     strata), greedy aggregation of strata below popMin
#     (gPars: the functions read colours even without a plot; setgPars needs ErrViewLib's palette)
d <- read.csv(file.path(dir, "synth.csv")); Z <- d$E / d$u; xd <- round(d$x * 20) / 20
gp <- list(cols = 1:7)
for (r in list(list(f = "ZV", g = function() plotStratZV(xd, Z, method = "cho", popMin = 100, plot = FALSE,
                                                          gPars = gp)),
               list(f = "ZM", g = function() plotStratZM(xd, Z, popMin = 30, plot = FALSE, gPars = gp)),
               list(f = "ZMS", g = function() plotStratZMS(xd, Z, method = "stud", popMin = 100, plot = FALSE,
                                                            gPars = gp)))) {
  a <- r$g()
  for (s in c("values", "counts", "pc", "pcl", "pcu")) out(paste0("synth_Strat", r$f, "_", s), a[[s]])
}
# 11. ZMSCI on the 8 bins of u of the synthetic set: "studc" (deterministic), and plotLZMS's
#     bootstrap (nptest BCa, 5000 resamples) over 20 seeds (mean and sd of the limits)
d <- read.csv(file.path(dir, "synth.csv")); Z <- d$E / d$u; zo <- Z[order(d$u)]
iv <- genIntervals(length(Z), 8, popMin = 100)
r <- sapply(1:8, function(i) ZMSCI(zo[iv$lwindx[i]:iv$upindx[i]], method = "studc")$ci)
out("synth_ZMSCIstudc_u", c(r[1, ], r[2, ]))
r <- sapply(1:20, function(i) { set.seed(200 + i)
  a <- plotLZMS(d$u, Z, method = "bootstrap", nBoot = 5000, plot = FALSE); c(a$pcl, a$pcu) })
out("synth_LZMSboot_u_mean", rowMeans(r)); out("synth_LZMSboot_u_sd", apply(r, 1, sd))
# 12. plotCalibrationQ with the normal predictive quantiles u*qnorm(p), p = 0.005 ... 0.995
prob <- seq(0.005, 0.995, by = 0.005)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  r <- plotCalibrationQ(d$E, list(quant = outer(d$u, qnorm(prob)), prob = prob), plot = FALSE)
  out(paste0(set, "_calQ"), c(r$misCal, r$misCalUp, r$calErr))
}
# 13. plotCCVal's consistency score (RMSE, normal reference of 1000 draws, BCa intervals of 5000
#     resamples) on the synthetic set over 10 seeds: mean and sd of CS and of the curve's intervals
d <- read.csv(file.path(dir, "synth.csv"))
r <- sapply(1:10, function(i) { set.seed(300 + i)
  a <- plotCCVal(d$E, d$u, score = TRUE, nBoot = 5000, rep_probref = 1000, plot = FALSE)
  c(a$CS, a$curveCI[, 1], a$curveCI[, 2]) })
out("synth_CCVal_mean", rowMeans(r)); out("synth_CCVal_sd", apply(r, 1, sd))
# 14. Confidence curves of the RMSD: Sconf and AUCO on both sets; DFPR and UP95 of the normal
#     reference on the synthetic set over 10 seeds (500 draws)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  out(paste0(set, "_Sconf_rmsd"), Sconf(d$E[order(d$u, decreasing = TRUE)], 0:99, rmsd, FALSE))
  out(paste0(set, "_AUCO_rmsd"), plotConfidence(d$E, d$u, stat = rmsd, normalize = FALSE, oracle = TRUE,
                                                 plot = FALSE)$AUCO)
}
d <- read.csv(file.path(dir, "synth.csv"))
r <- sapply(1:10, function(i) { set.seed(400 + i)
  a <- plotConfidence(d$E, d$u, stat = rmsd, normalize = FALSE, oracle = FALSE, probref = TRUE,
                      rep_probref = 500, plot = FALSE)
  c(a$DFPR, a$UP95) })
out("synth_CCrmsd_mean", rowMeans(r)); out("synth_CCrmsd_sd", apply(r, 1, sd))
# 15. Confidence curves of Q95 (HD 95th percentile of |E|, plotCC(statS = "Q95")): Sconf and AUCO on
#     both sets; DFPR and UP95 of the normal reference over 10 seeds (100 draws: R's hd takes 2 ms
#     per call); DFPR and UP95 of the
#     RMSE curve with the Normp4 and Laplace references (10 seeds, 500 draws)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  out(paste0(set, "_Sconf_q95"), Sconf(d$E[order(d$u, decreasing = TRUE)], 0:99, q95hd, FALSE))
  out(paste0(set, "_AUCO_q95"), plotConfidence(d$E, d$u, stat = q95hd, normalize = FALSE, oracle = TRUE,
                                                plot = FALSE)$AUCO)
}
d <- read.csv(file.path(dir, "synth.csv"))
r <- sapply(1:10, function(i) { set.seed(500 + i)
  a <- plotCC(d$E, d$u, statS = "Q95", rep_probref = 100, plot = FALSE); c(a$DFPR, a$UP95) })
out("synth_CCq95_mean", rowMeans(r)); out("synth_CCq95_sd", apply(r, 1, sd))
for (dd in c("Normp4", "Laplace")) {
  r <- sapply(1:10, function(i) { set.seed(600 + i)
    a <- plotCC(d$E, d$u, statS = "RMSE", dist_probref = dd, rep_probref = 500, plot = FALSE); c(a$DFPR, a$UP95) })
  out(paste0("synth_CC", dd, "_mean"), rowMeans(r)); out(paste0("synth_CC", dd, "_sd"), apply(r, 1, sd))
}
# 16. plotCalibration's scores (misCal, misCalUp, calErr) with the quantiles of unit-variance Normp4, T4,
#     Uniform and Laplace
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  for (dd in c("Normal", "Normp4", "T4", "Uniform", "Laplace")) {
    r <- plotCalibration(d$E, d$u, dist = dd, plot = FALSE)
    out(paste0(set, "_calib_", dd), c(r$misCal, r$misCalUp, r$calErr))
  }
}
# 17. Conditional calibration curves of plotCalibrationQ(cond = u or x): the per-bin curves peCond
#     (default bins), normal quantiles u*qnorm(p), p = 0.005 ... 0.995
capture("plotCalibrationQ", "peCond")
prob <- seq(0.005, 0.995, by = 0.005)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  for (v in c("u", "x")) {
    plotCalibrationQ(d$E, list(quant = outer(d$u, qnorm(prob)), prob = prob), cond = d[[v]], plot = FALSE)
    out(paste0(set, "_calQcond_", v), .captured$peCond)
  }
}
invisible(untrace("plotCalibrationQ", where = globalenv()))
# 18. plotLRR with U = 1.96 u (prob 0.95) on bins of u and of x: values and bin centres on both sets
#     (deterministic), BCa limits (boot, R = 1000) on the synthetic set over 10 seeds
capture("plotLRR", c("loP", "upP"))
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  for (v in c("u", "x")) {
    set.seed(1)
    r <- plotLRR(d$E, 1.96 * d$u, ordX = d[[v]], plot = FALSE)
    out(paste0(set, "_LRR_", v, "_mint"), r$mint); out(paste0(set, "_LRR_", v, "_pc"), r$pc)
  }
}
d <- read.csv(file.path(dir, "synth.csv"))
for (v in c("u", "x")) {
  r <- sapply(1:10, function(i) { set.seed(700 + i)
    plotLRR(d$E, 1.96 * d$u, ordX = d[[v]], plot = FALSE); c(.captured$loP, .captured$upP) })
  out(paste0("synth_LRRboot_", v, "_mean"), rowMeans(r)); out(paste0("synth_LRRboot_", v, "_sd"), apply(r, 1, sd))
}
invisible(untrace("plotLRR", where = globalenv()))
# 19. ZMSCI(method = "bspiv") (bootstrap pivotal interval, 5000 resamples) on the 8 bins of u of the
#     synthetic set, over 20 seeds
d <- read.csv(file.path(dir, "synth.csv")); Z <- d$E / d$u; zo <- Z[order(d$u)]
iv <- genIntervals(length(Z), 8, popMin = 100)
r <- sapply(1:20, function(i) { set.seed(800 + i)
  sapply(1:8, function(b) ZMSCI(zo[iv$lwindx[b]:iv$upindx[b]], method = "bspiv")$ci) })
out("synth_ZMSCIbspiv_u_mean", rowMeans(r)); out("synth_ZMSCIbspiv_u_sd", apply(r, 1, sd))
# 20. plotAGV (worst-group |ln <Z^2>| over 100 random groups, stat max, 100 repeats, normal control) on
#     the synthetic set and plotAGVZMS (fraction of valid Student ZMS intervals in random groups, 200
#     repeats) on QM9_E: 10 seeds each, mean and sd of the curves
pdf(NULL)
capture("plotAGV", c("sizes", "ag", "agu", "agc", "agcu"))
d <- read.csv(file.path(dir, "synth.csv")); Z <- d$E / d$u
r <- sapply(1:10, function(i) { set.seed(900 + i); plotAGV(Z, nMC = 100, gPars = gPlot)
  with(.captured, c(ag, agu, agc, agcu)) })
out("synth_AGV_sizes", .captured$sizes)
out("synth_AGV_mean", rowMeans(r)); out("synth_AGV_sd", apply(r, 1, sd))
capture("plotAGVZMS", c("sizes", "pVal", "pValc"))
d <- read.csv(file.path(dir, "qm9.csv")); Z <- d$E / d$u
r <- sapply(1:10, function(i) { set.seed(1000 + i); plotAGVZMS(Z, method = "stud", nMC = 200, gPars = gPlot)
  with(.captured, c(pVal, pValc)) })
out("qm9_AGVZMS_sizes", .captured$sizes)
out("qm9_AGVZMS_mean", rowMeans(r)); out("qm9_AGVZMS_sd", apply(r, 1, sd))
invisible(dev.off())
# 21. calibScores' default nBin = sqrt(M) (not an integer: genIntervals keeps floor(sqrt(M)) cuts of
# the grid of ceiling(sqrt(M)) bins, the last bin doubled) on both sets, and genIntervals(M, sqrt(M))
# for a few M around the popMin reduction (sqrt(M) < 30 below M = 900)
for (set in c("qm9", "synth")) {
  d <- read.csv(file.path(dir, paste0(set, ".csv")))
  cs <- calibScores(d$E, d$u, X = d$x)
  for (s in names(cs)) out(paste0(set, "_calibScores_sqrt_", s), cs[[s]])
  out(paste0(set, "_genIntervals_sqrt_starts"), genIntervals(d$u, sqrt(nrow(d)))$lwindx - 1)
}
for (M in c(1200L, 2000L, 2500L, 901L, 899L, 500L)) out(paste0("sqrt_starts_", M), genIntervals(M, sqrt(M))$lwindx - 1)
cat("R", R.version.string, "\n")
