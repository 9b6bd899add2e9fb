"""The published static site (jury report -f html): its pages, its folder's manifest and its templates."""
