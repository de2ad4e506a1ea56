"""The one way in for every front end: practice or real, the cloud, launches, leftovers."""
