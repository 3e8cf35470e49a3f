"""The preset tables, one module per trainer family; ``bracket.registry`` joins them."""
