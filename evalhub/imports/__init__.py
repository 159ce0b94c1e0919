"""What crosses both pools in files: rating and annotator-JSON imports, datasets, import jobs, exports."""
