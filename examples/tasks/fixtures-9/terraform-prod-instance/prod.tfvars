region           = "eu-north-1"
# instance_type  = "m6i.xlarge"
instance_type    = "m6i.large"
db_instance_type = "db.r6g.large"
app_count        = 4
