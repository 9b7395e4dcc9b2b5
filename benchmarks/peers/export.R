# Write R packages' datasets as CSV for benchmarks/public_data.py, once; R's own structure kept:
#   Rscript export.R OUT_DIR PACKAGE:DATASET ...
# OUT_DIR/DATASET.csv holds the rows (missing values empty); OUT_DIR/DATASET.columns.tsv holds one line
# per column, "name<TAB>kind" with kind numeric (numeric, integer; an ordered factor as its level
# number), nominal (an unordered factor, logical or character), and a first line "#<TAB>PACKAGE<TAB>VERSION".
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
for (spec in args[-1]) {
  parts <- strsplit(spec, ":", fixed = TRUE)[[1]]
  pkg <- parts[1]; name <- parts[2]
  env <- new.env()
  data(list = name, package = pkg, envir = env)
  frame <- as.data.frame(get(name, envir = env))
  kinds <- character(ncol(frame))
  for (j in seq_len(ncol(frame))) {
    column <- frame[[j]]
    if (is.ordered(column)) {
      frame[[j]] <- as.integer(column); kinds[j] <- "numeric"
    } else if (is.factor(column) || is.logical(column) || is.character(column)) {
      frame[[j]] <- as.character(column); kinds[j] <- "nominal"
    } else {
      kinds[j] <- "numeric"
    }
  }
  write.csv(frame, file.path(out, paste0(name, ".csv")), row.names = FALSE, na = "")
  lines <- c(paste("#", pkg, as.character(packageVersion(pkg)), sep = "\t"), paste(names(frame), kinds, sep = "\t"))
  writeLines(lines, file.path(out, paste0(name, ".columns.tsv")))
}
