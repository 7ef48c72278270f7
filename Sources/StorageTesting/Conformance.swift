import Storage
