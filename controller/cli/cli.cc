namespace gpufed::cli {}
