# R's rpart with its defaults, pruned from its cp table (the 1-SE rule, or the least xerror), on the given folds:
#   Rscript rpart_folds.R DATA.csv KINDS [METHOD [RULE]]
# DATA.csv's columns: fold (0..k-1), the attributes, target (last). KINDS has one letter per column of
# DATA.csv: "i" the fold, "n" numeric, "f" nominal (a factor over every row's levels). METHOD is
# "class" (the default; the target a factor) or "anova" (a numeric target). RULE is "1se" (the
# default: the simplest cp whose xerror is within one xstd of the least) or "min" (the least xerror).
# For each fold, rpart learns from the other folds' rows (its own 10-fold xval, seed 0, gives the cp
# table), the tree is pruned at the cp RULE chooses, and the
# fold's rows are predicted; one line per fold: "fold score rows fit_seconds leaves", the score being
# the rows classified right ("class") or the sum of squared errors ("anova").
suppressPackageStartupMessages(library(rpart))
args <- commandArgs(trailingOnly = TRUE)
kinds <- strsplit(args[2], "")[[1]]
method <- if (length(args) >= 3) args[3] else "class"
rule <- if (length(args) >= 4) args[4] else "1se"
if (!(rule %in% c("1se", "min"))) stop("RULE is 1se or min")
classes <- c(i = "integer", n = "numeric", f = "factor")[kinds]
frame <- read.csv(args[1], colClasses = unname(classes), na.strings = "", check.names = FALSE)
fold <- frame$fold
frame$fold <- NULL
for (f in sort(unique(fold))) {
  train <- frame[fold != f, , drop = FALSE]
  test <- frame[fold == f, , drop = FALSE]
  set.seed(0)
  started <- proc.time()[["elapsed"]]
  fit <- rpart(target ~ ., data = train, method = method)
  cp <- fit$cptable
  best <- which.min(cp[, "xerror"])
  chosen <- if (rule == "min") best else which(cp[, "xerror"] <= cp[best, "xerror"] + cp[best, "xstd"])[1]
  pruned <- prune(fit, cp = cp[chosen, "CP"])
  seconds <- proc.time()[["elapsed"]] - started
  if (method == "class") {
    score <- sum(as.character(predict(pruned, test, type = "class")) == as.character(test$target))
  } else {
    score <- sum((predict(pruned, test) - test$target)^2)
  }
  cat(f, sprintf("%.17g", score), nrow(test), seconds, sum(pruned$frame$var == "<leaf>"), "\n")
}
