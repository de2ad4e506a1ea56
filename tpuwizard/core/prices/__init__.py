"""TPU prices read from Google's Cloud Billing Catalog, cached on disk, with the offline table
(core/plan/catalog.toml) as the fallback. Plain Python: Google's client is imported only inside
the reader's function, never on the CLI's or the first screen's path."""
