"""Presigned URLs (S3 SigV4, query-string auth, one hour), path-style:
what bench/cluster-reads.sh and bench/cluster-uploads.sh ask of the
bucket directly, as the anchors of storesrv's large GETs and small
uploads (issue 37). METHOD is GET unless given (PUT for an upload); with
COUNT, it prints COUNT URLs, for KEY-0 to KEY-(COUNT-1), one per line
(uploads of new objects). Standard library only.

    python3 bench/presign.py ENDPOINT REGION ACCESS_KEY_ID SECRET /BUCKET/KEY [METHOD [COUNT]]
"""
import datetime, hashlib, hmac, sys, urllib.parse

endpoint, region, key, secret, path = sys.argv[1:6]
method = sys.argv[6] if len(sys.argv) > 6 else "GET"
count = int(sys.argv[7]) if len(sys.argv) > 7 else None
u = urllib.parse.urlparse(endpoint)
now = datetime.datetime.now(datetime.timezone.utc)
amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
scope = f"{day}/{region}/s3/aws4_request"
q = {"X-Amz-Algorithm": "AWS4-HMAC-SHA256", "X-Amz-Credential": f"{key}/{scope}",
     "X-Amz-Date": amz_date, "X-Amz-Expires": "3600", "X-Amz-SignedHeaders": "host"}
cq = "&".join(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}" for k, v in sorted(q.items()))
k = ("AWS4" + secret).encode()
for part in (day, region, "s3", "aws4_request"):
    k = hmac.new(k, part.encode(), hashlib.sha256).digest()


def presigned(path):
    canon = "\n".join([method, urllib.parse.quote(path, safe="/-_.~"), cq, f"host:{u.netloc}", "", "host", "UNSIGNED-PAYLOAD"])
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canon.encode()).hexdigest()])
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    return f"{endpoint}{path}?{cq}&X-Amz-Signature={sig}"


if count is None:
    print(presigned(path))
else:
    print("\n".join(presigned(f"{path}-{i}") for i in range(count)))
