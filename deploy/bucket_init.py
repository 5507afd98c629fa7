"""Make the run files' bucket if it is missing; safe to run again (`python deploy/bucket_init.py`).

The one-shot `bucket-init` service of deploy/docker-compose.yml, and the same step for a
host without containers (README, "Production"). It reads the service's own settings
(AWS_STORAGE_BUCKET_NAME, AWS_S3_ENDPOINT_URL, AWS_S3_REGION_NAME and the keys, each
also as NAME_FILE), so the bucket it makes is the one the site and the workers write
to. The staging test (tests/staging/) makes its bucket on moto's S3 server with it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

NO_BUCKET = "AWS_STORAGE_BUCKET_NAME is unset: runs are stored in local files, no bucket to make"
#: What S3 answers for a bucket that does not exist (HEAD has no body: the status alone).
MISSING = {"404", "NoSuchBucket", "NotFound"}


def main() -> int:
    import django

    django.setup()
    import boto3  # type: ignore[import-untyped]
    from botocore.exceptions import ClientError  # type: ignore[import-untyped]
    from django.conf import settings

    options = settings.STORAGES["default"].get("OPTIONS", {})
    bucket = options.get("bucket_name")
    if not bucket:
        print(NO_BUCKET)
        return 0
    region = options.get("region_name")
    client = boto3.client("s3", endpoint_url=options.get("endpoint_url"), region_name=region,
                          aws_access_key_id=options.get("access_key"),
                          aws_secret_access_key=options.get("secret_key"))
    try:
        client.head_bucket(Bucket=bucket)
    except ClientError as error:
        if str(error.response.get("Error", {}).get("Code")) not in MISSING:
            raise
    else:
        print(f"bucket {bucket} is there")
        return 0
    # us-east-1 is the one region S3 refuses to be told (its default).
    where = ({"CreateBucketConfiguration": {"LocationConstraint": region}}
             if region and region != "us-east-1" else {})
    client.create_bucket(Bucket=bucket, **where)
    print(f"made bucket {bucket}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
