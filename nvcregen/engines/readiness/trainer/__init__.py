"""Trainer mode: no NVCRE; nvcregen writes every run as a TrainJob or a Job."""
