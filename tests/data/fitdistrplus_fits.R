# P. Pernot's data-set characterisation (ppernot/2024_RCE, R/fitDist.R and R/altRCE.R), run on
# mcref's nine built-in sets: fitdistrplus::fitdist, method "mge" with gof = "KS" (u^2: gamma fit of
# 1/u^2; E^2 and Z^2: scaled F(1, df)), and "mle" of a shifted/scaled t on Z.
# Input: one CSV per set with columns E,u (e.g. written from mcref.datasets.load(name)) in csv_dir.
csv_dir <- commandArgs(trailingOnly = TRUE)[1]
suppressMessages(library(fitdistrplus))
pf_s <- function(q, df=1, sigma=1)  pf(q/sigma, 1, df)
df_s <- function(x, df=1, sigma=1) 1/sigma * df(x/sigma, 1, df)
qf_s <- function(p, df=1, sigma=1)  qf(p, 1, df)*sigma
dt_ls <- function(x, df=1, mu=0, sigma=1) 1/sigma * dt((x - mu)/sigma, df)
pt_ls <- function(q, df=1, mu=0, sigma=1)  pt((q - mu)/sigma, df)
ks <- function(x, cdf) { x <- sort(x); n <- length(x); F <- cdf(x); max(c((1:n)/n - F, F - (0:(n-1))/n)) }
sets <- c("Diffusion_RF","Perovskite_RF","Diffusion_LR","Perovskite_LR","Diffusion_GPR_Bayesian",
          "Perovskite_GPR_Bayesian","QM9_E","logP_10k_a_LS-GCN","logP_150k_LS-GCN")
out <- NULL
for (s in sets) {
  D <- read.csv(file.path(csv_dir, paste0(s, ".csv")))
  uE <- D$u; E <- D$E; Z <- E/uE
  f1 <- fitdist(1/uE^2, "gamma", method = "mge", start = list(shape = 10, scale = 1), keepdata = FALSE, gof = "KS")
  shape <- unname(f1$estimate["shape"]); scale <- unname(f1$estimate["scale"])
  ks_u2 <- ks(1/uE^2, function(x) pgamma(x, shape = shape, scale = scale))
  f2 <- fitdist(E^2, "f_s", method = "mge", start = list(df = 10, sigma = 1), keepdata = FALSE, gof = "KS")
  ks_E2 <- ks(E^2, function(x) pf_s(x, f2$estimate["df"], f2$estimate["sigma"]))
  f3 <- fitdist(Z^2, "f_s", method = "mge", start = list(df = 10, sigma = 1), keepdata = FALSE, gof = "KS")
  ks_Z2 <- ks(Z^2, function(x) pf_s(x, f3$estimate["df"], f3$estimate["sigma"]))
  f4 <- fitdist(Z, "t_ls", start = list(df = 5, mu = mean(Z), sigma = sd(Z)), keepdata = FALSE)
  out <- rbind(out, data.frame(
    set = s, ig_shape = shape, ig_scale = 1/scale, ks_u2 = ks_u2,
    E2_df = unname(f2$estimate["df"]), E2_sigma = unname(f2$estimate["sigma"]), ks_E2 = ks_E2,
    Z2_df = unname(f3$estimate["df"]), Z2_sigma = unname(f3$estimate["sigma"]), ks_Z2 = ks_Z2,
    t_df = unname(f4$estimate["df"]), t_mu = unname(f4$estimate["mu"]), t_sigma = unname(f4$estimate["sigma"]),
    t_loglik = f4$loglik, t_se_df = unname(f4$sd["df"]), t_se_mu = unname(f4$sd["mu"]), t_se_sigma = unname(f4$sd["sigma"])))
}
write.csv(out, "fitdistrplus_fits.csv", row.names = FALSE)
print(out, digits = 5)
cat(R.version.string, " fitdistrplus ", as.character(packageVersion("fitdistrplus")), "\n")
