"""Judge validation: labelled sets, the figures a judge reaches on them, the campaign's bar."""
