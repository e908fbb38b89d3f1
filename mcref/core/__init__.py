"""The core of mcref: argument checks, warnings, input tables, prepared data (sorted order,
bins, tie runs), the dependence of rows (groups, blocks along an order), Harrell–Davis weights,
progress and BLAS-independent dot products (docs/architecture.md, "Layers").

Nothing here is imported by users: the public names are re-exported by the package face."""
