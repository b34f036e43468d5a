import argparse
ap = argparse.ArgumentParser(description="render a page of a PDF as text")
ap.add_argument("file")
ap.add_argument("--page", type=int, default=1)
ap.parse_args()
