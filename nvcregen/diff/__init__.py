"""`nvcregen diff`: what a change to the sites does, in hardware terms and object by object."""
