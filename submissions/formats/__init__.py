"""Pure parsers and writers of the run files and data files, one module per format.
No Django imports, so a file can be checked on its own (a CLI, the client `evalctl`);
the formats and their rules: docs/formats.md."""
